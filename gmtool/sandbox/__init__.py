"""The sandbox: scripted hands (scenario files) played by the engine, no database."""
