// The player page (issue 25): one person at one table through the gateway's WebSocket,
// protocol 1 (the project's docs/protocol.md). Plain JavaScript, no build step.
// Everything the server sends is inserted as text (textContent), never as HTML.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const AMOUNT_VERBS = new Set(["bet", "raise", "follow"]); // the verbs an `act` gives an amount
  const KEY = "gmtool.play."; // sessionStorage: the token, and the table with its last seq
  const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  const KEEP_TURN = new Set(["look", "reconnect", "first_speaker", "ante"]); // mine, the turn stands
  const WORDS = { allin: "all in", follow: "follow", look: "look at my cards", open: "open" };
  const FINAL = {
    4001: "the host refused the token",
    4002: "the host did not take the greeting",
    4003: "a GM removed you",
    4004: "you connected again elsewhere (this page stops)",
    4007: "this page sent too many messages (the host closed it)",
  };

  let socket = null;
  let token = "";
  let me = "";
  let coins = 0;
  let table = null; // {id, seq, profile, tier, game, seated, joining, events: [{seq, event}]}
  let hand = null; // the running (or last) hand, built from the table's events
  let turn = null; // the standing `your_turn` frame
  let retry = 0;
  let retryTimer = null;
  let resuming = false; // a hello with `resume` went out: has anything of the table come?
  let heard = false;
  let requests = 0;
  let logLines = [];

  // -- small helpers ---------------------------------------------------------------------

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function coinText(value) {
    return typeof value === "number" ? value.toLocaleString("en-US") : "?";
  }

  function show(id, visible) {
    $(id).hidden = !visible;
  }

  function notice(text) {
    const box = $("notice");
    box.textContent = text;
    box.hidden = !text;
  }

  function setStatus(state, text) {
    const status = $("status");
    status.dataset.state = state;
    status.textContent = text;
  }

  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  function request(frame) {
    requests += 1;
    frame.id = `${frame.type}-${requests}`;
    return send(frame) ? frame.id : null;
  }

  // -- the table as kept across reloads (sessionStorage) ------------------------------------

  function saveTable() {
    if (table) sessionStorage.setItem(KEY + "table", JSON.stringify(table));
    else sessionStorage.removeItem(KEY + "table");
  }

  function loadTable() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(KEY + "table") || "null");
      if (saved && typeof saved.id === "string" && Number.isInteger(saved.seq)) return saved;
    } catch (error) {
      // a damaged entry: start from the lobby
    }
    return null;
  }

  // -- the connection ----------------------------------------------------------------------

  function connect() {
    clearTimeout(retryTimer);
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    setStatus(retry ? "reconnecting" : "connecting", retry ? `reconnecting (try ${retry})` : "connecting");
    let ws;
    try {
      ws = new WebSocket(scheme + location.host + "/");
    } catch (error) {
      lost(1006);
      return;
    }
    socket = ws;
    ws.onopen = () => {
      const hello = { type: "hello", protocol: 1, token };
      if (table) hello.resume = { table: table.id, seq: table.seq };
      resuming = Boolean(hello.resume);
      heard = false;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      if (frame && typeof frame === "object") receive(frame);
    };
    ws.onclose = (close) => {
      if (socket !== ws) return;
      socket = null;
      lost(close.code, close.reason);
    };
  }

  function lost(code, reason) {
    turn = null;
    renderTurn();
    if (code in FINAL) {
      setStatus("stopped", `disconnected: ${FINAL[code]}${reason ? ` (${reason})` : ""}`);
      if (code === 4001) {
        sessionStorage.removeItem(KEY + "token");
        token = "";
        show("login", true);
      }
      return;
    }
    retry += 1;
    const delay = Math.min(500 * 2 ** (retry - 1), 8000);
    setStatus("reconnecting", `connection lost: reconnecting in ${(delay / 1000).toFixed(1)} s (try ${retry})`);
    retryTimer = setTimeout(connect, delay);
  }

  // -- frames from the host ----------------------------------------------------------------

  function receive(frame) {
    switch (frame.type) {
      case "welcome":
        me = String(frame.player);
        coins = frame.coins;
        retry = 0;
        setStatus("connected", `connected as ${me}`);
        renderWho();
        request({ type: "lobby" }); // its answer comes after anything the resume sends
        break;
      case "lobby":
        renderLobby(frame.rooms || []);
        if (resuming && !heard && table) request({ type: "look", table: table.id });
        resuming = false;
        break;
      case "snapshot":
        onSnapshot(frame);
        break;
      case "event":
        onEvent(frame);
        break;
      case "setup":
        if (table && frame.table === table.id) {
          table.setup = frame.setup;
          renderSetup();
        }
        break;
      case "your_turn":
        if (table && frame.table === table.id) {
          turn = { ...frame, received: Date.now() / 1000, sent: false };
          renderTurn();
        }
        break;
      case "error":
        notice(`${frame.message || frame.error}${frame.rule ? ` (rule ${frame.rule})` : ""}`);
        if (frame.error === "no_table" && table) leaveTable(); // closed, or another host run
        if (turn && turn.sent && typeof frame.id === "string" && frame.id.startsWith("act-")) {
          turn.sent = false; // refused: the turn stands
          renderTurn();
        }
        break;
      case "kicked":
        notice(`A GM removed you from ${frame.table}${frame.reason ? `: ${frame.reason}` : ""}`);
        leaveTable();
        break;
      case "closed":
        if (frame.table) {
          notice(`The table ${frame.table} was closed: ${frame.reason || ""}`);
          leaveTable();
          request({ type: "lobby" });
        } else {
          notice(`The host is stopping: ${frame.reason || ""}`);
        }
        break;
      default:
        break; // a message a later protocol may add: ignored
    }
  }

  function onSnapshot(frame) {
    const seated = (frame.seated || []).includes(me);
    const joining = (frame.joining || []).includes(me);
    if (!seated && !joining) {
      if (table && table.id === frame.table) {
        leaveTable(); // left, or stood up meanwhile
        request({ type: "lobby" });
      }
      return;
    }
    heard = true;
    table = {
      id: frame.table,
      seq: frame.seq,
      profile: frame.profile,
      tier: frame.tier,
      game: frame.game,
      seated: frame.seated || [],
      joining: frame.joining || [],
      events: [],
      setup: frame.setup || null, // an owner-ante table's setup (RULES L1-L6)
    };
    rebuild(frame.events || []);
    if (frame.hand) overlay(frame.hand);
    table.seq = frame.seq;
    saveTable();
    render();
  }

  function onEvent(frame) {
    if (!table || frame.table !== table.id) return;
    heard = true;
    if (frame.seq <= table.seq) return; // seen already
    if (frame.seq > table.seq + 1) {
      request({ type: "look", table: table.id }); // a gap: ask for the table again
      return;
    }
    apply(frame.seq, frame.event || {});
    saveTable();
    render();
  }

  function leaveTable() {
    table = null;
    hand = null;
    turn = null;
    saveTable();
    render();
  }

  // -- the hand, from its events ------------------------------------------------------------

  function rebuild(events) {
    hand = null;
    table.events = [];
    logLines = [];
    for (const item of events) apply(item.seq, item.event || {});
  }

  function apply(seq, event) {
    table.seq = seq;
    if (event.type === "hand_started") {
      table.events = [];
      hand = newHand(event);
      const inHand = hand.seats.has(me);
      table.joining = table.joining.filter((name) => name !== me || !inHand);
    }
    table.events.push({ seq, event });
    if (hand) step(hand, event);
    log(seq, event);
    if (turn && (event.type === "hand_ended" || (event.player === me && !KEEP_TURN.has(event.type)))) {
      turn = null; // acted, timed out or left: the turn is over
    } else if (turn && event.player === me && event.type === "look") {
      turn.legal = turn.legal.filter((legal) => legal.verb !== "look"); // until the host's
      turn.sent = false; // fresh your_turn brings the amounts of a player who has seen
    }
  }

  function newHand(event) {
    const fresh = { game: event.game, ante: event.ante, pot: 0, over: false, winners: [], seats: new Map(), start: 0 };
    for (const seat of event.seats || []) seatOf(fresh, seat.player).coins = seat.coins;
    return fresh;
  }

  function seatOf(state, name) {
    const key = String(name);
    if (!state.seats.has(key)) {
      state.seats.set(key, { name: key, coins: null, total: 0, cards: [], folded: false, connected: true, last: "", description: "" });
    }
    return state.seats.get(key);
  }

  function step(state, event) {
    if (state.start === 0) state.start = table.seq;
    const seat = typeof event.player === "string" ? seatOf(state, event.player) : null;
    switch (event.type) {
      case "ante":
        seat.total += event.amount || 0;
        if (typeof event.pot !== "number") state.pot += event.amount || 0;
        break;
      case "deal":
        for (const card of event.cards || []) {
          if (card && typeof card === "object") seatOf(state, card.player).cards.push({ card: card.card, face: card.face });
        }
        break;
      case "look":
        if (seat && event.player === me && Array.isArray(event.cards)) {
          const own = [...event.cards];
          for (const card of seat.cards) if (card.face === "down" && own.length) card.card = own.shift();
        }
        break;
      case "fold":
      case "escape":
      case "removed":
        if (seat) seat.folded = true;
        break;
      case "disconnect":
        if (seat) seat.connected = false;
        break;
      case "reconnect":
        if (seat) seat.connected = true;
        break;
      case "showdown":
        for (const shown of event.hands || []) {
          const owner = seatOf(state, shown.player);
          owner.cards = (shown.cards || []).map((card) => ({ card, face: "up" }));
          owner.description = shown.description || "";
        }
        state.explanation = event.explanation || "";
        break;
      case "hand_ended":
        state.over = true;
        state.winners = event.winners || [];
        break;
      case "settlement":
        for (const entry of event.entries || []) {
          if (entry.player === me && typeof entry.delta === "number") {
            state.delta = entry.delta;
            coins += entry.delta;
          }
        }
        renderWho();
        break;
      default:
        break;
    }
    if (typeof event.pot === "number") state.pot = event.pot;
    if (seat && typeof event.total === "number") seat.total = event.total;
    if (seat && !["ante", "deal", "first_speaker", "reconnect"].includes(event.type)) {
      seat.last = event.amount ? `${event.type} ${coinText(event.amount)}` : event.type;
    }
  }

  function overlay(view) {
    // the host's public view of the running hand: pot, totals, who folded or is away
    if (!hand) {
      hand = { game: view.game, pot: 0, over: false, winners: [], seats: new Map(), start: table.seq };
      for (const player of view.players || []) {
        seatOf(hand, player.name).cards = (player.showing || []).map((card) => ({ card, face: "up" }));
      }
    }
    hand.pot = view.pot;
    for (const player of view.players || []) {
      const seat = seatOf(hand, player.name);
      seat.total = player.total;
      seat.folded = player.folded;
      seat.connected = player.connected;
    }
  }

  // -- what the page shows ------------------------------------------------------------------

  function log(seq, event) {
    logLines.push({ seq, text: describe(event) });
    if (logLines.length > 40) logLines.shift();
  }

  function describe(event) {
    const who = typeof event.player === "string" ? event.player : "";
    switch (event.type) {
      case "hand_started":
        return `a new hand: ${(event.seats || []).map((seat) => seat.player).join(", ")}; ante ${coinText(event.ante)}`;
      case "deal": {
        const up = (event.cards || []).filter((card) => card.face === "up").map((card) => `${card.player} ${cardText(card.card)}`);
        return up.length ? `cards dealt: ${up.join(", ")}` : "cards dealt";
      }
      case "first_speaker":
        return `${who} speaks first${event.showing ? ` (${event.showing})` : ""}`;
      case "street_end":
        return `street ${event.street} ends; pot ${coinText(event.pot)}`;
      case "showdown":
        return `showdown: ${(event.winners || []).join(", ")} ${event.explanation ? `(${event.explanation})` : ""}`;
      case "hand_ended":
        return `the hand is over: ${(event.winners || []).join(", ")} won ${coinText(event.pot)}`;
      case "settlement": {
        const mine = (event.entries || []).find((entry) => entry.player === me);
        return mine ? `settled: ${mine.delta >= 0 ? "+" : ""}${coinText(mine.delta)} for you` : "settled";
      }
      default: {
        const amount = typeof event.amount === "number" ? ` ${coinText(event.amount)}` : "";
        const target = typeof event.target === "string" ? ` ${event.target}` : "";
        return `${who ? `${who} ` : ""}${WORDS[event.type] || event.type}${amount}${target}`;
      }
    }
  }

  function cardText(card) {
    if (typeof card !== "string" || card.length < 2 || card === "??") return "?";
    const rank = card.slice(0, -1) === "T" ? "10" : card.slice(0, -1);
    return rank + (SUITS[card.slice(-1)] || card.slice(-1));
  }

  function cardNode(card, mine) {
    const hidden = typeof card.card !== "string" || card.card === "??";
    const node = el("span", hidden ? "" : cardText(card.card), "card");
    if (hidden) node.classList.add("back");
    else if (/[HD]$/.test(card.card)) node.classList.add("red");
    if (mine && card.face === "down") node.classList.add("hole");
    node.title = hidden ? "face down" : `${cardText(card.card)}${card.face === "down" ? " (face down: only you see it)" : ""}`;
    return node;
  }

  function render() {
    show("lobby", Boolean(me) && !table);
    show("table", Boolean(table));
    if (table) renderTable();
    renderTurn();
    renderSetup();
  }

  // An owner-ante table between hands (RULES L1-L6): the owner's ante buttons and start,
  // the others' agree or reject, everyone's start after a hand. The engine judges each.
  const PHASES = {
    empty: "the table is empty",
    setting_ante: "the owner sets the ante",
    agreeing: "agree to the ante, or reject it",
    countdown: "everyone agreed: the owner starts",
    continue: "press start for the next hand, or leave",
  };

  let setupShown = ""; // the setup the buttons were made for: made again only when it changes

  function renderSetup() {
    const setup = table && table.setup;
    const open = Boolean(setup) && setup.phase !== "playing" && setup.seated.includes(me);
    show("setup", open);
    if (!open) {
      setupShown = "";
      return;
    }
    // Every frame renders the page; the buttons stay the same nodes until the setup
    // changes, so a press (a person's, or a test's click) never lands on a replaced one.
    const shown = JSON.stringify([table.id, me, setup]);
    if (shown === setupShown) return;
    setupShown = shown;
    const owner = setup.owner === me ? "you" : setup.owner || "nobody";
    $("setup-state").textContent =
      `Owner: ${owner} · ante ${coinText(setup.ante)} · ${PHASES[setup.phase] || setup.phase}`;
    const actions = $("setup-actions");
    actions.replaceChildren();
    const button = (label, name, frame) => {
      const node = el("button", label);
      node.type = "button";
      node.dataset.setup = name;
      node.addEventListener("click", () => {
        notice("");
        request({ table: table.id, ...frame });
      });
      actions.append(node);
    };
    const choosing = ["setting_ante", "agreeing", "countdown"].includes(setup.phase);
    if (setup.owner === me && choosing) {
      for (const chip of setup.chips) button(`+${coinText(chip)}`, `ante-${chip}`, { type: "act", verb: "ante", amount: chip });
      button("max", "ante-max", { type: "act", verb: "ante", target: "max" });
      button("clear", "ante-clear", { type: "act", verb: "ante", target: "clear" });
      if (setup.phase !== "setting_ante" && setup.agreed.length) button("start", "start", { type: "start" });
    } else if (setup.owner !== me && setup.phase !== "setting_ante" && choosing && !setup.agreed.includes(me)) {
      button("agree", "agree", { type: "act", verb: "agree" });
      button("reject (leave)", "reject", { type: "act", verb: "reject" });
    } else if (setup.phase === "continue" && !setup.ready.includes(me)) {
      button("start the next hand", "start", { type: "start" });
    }
  }

  function renderWho() {
    show("who", Boolean(me));
    $("player").textContent = me;
    $("coins").textContent = coinText(coins);
  }

  function renderLobby(rooms) {
    const body = $("rooms").tBodies[0];
    body.replaceChildren();
    for (const room of rooms) {
      const row = el("tr");
      row.dataset.room = `${room.profile}/${room.tier}`;
      row.append(el("td", `${room.profile} · ${room.tier}`), el("td", room.game));
      const need = room.coins_to_sit === null ? "the owner's ante" : coinText(room.coins_to_sit);
      const short = typeof room.coins_to_sit === "number" && coins < room.coins_to_sit;
      row.append(el("td", need, short ? "short" : ""), el("td", room.seats));
      const tables = el("td");
      // every host's tables are listed: `here: false` is another host's, reached at its address
      const away = (item) => item.here === false;
      for (const item of room.tables || []) {
        const where = away(item) ? ` · served by another host: ${item.address || "no address"}` : "";
        tables.append(el("span", `${item.table} (${item.seated}/${room.seats})${where}`, "tag"));
      }
      row.append(tables);
      const cell = el("td");
      if ((room.tables || []).every(away)) {
        cell.append(el("span", "on another host"));
      } else {
        const sit = el("button", "sit");
        sit.type = "button";
        sit.addEventListener("click", () => {
          notice("");
          request({ type: "sit", profile: room.profile, tier: room.tier });
        });
        cell.append(sit);
      }
      row.append(cell);
      body.append(row);
    }
    render();
  }

  function renderTable() {
    $("table-name").textContent = `${table.id}`;
    $("hand-no").textContent = `${table.profile} · ${table.tier} · ${table.game}`;
    const felt = $("felt");
    felt.dataset.hand = hand ? String(hand.start) : "";
    felt.dataset.over = hand && hand.over ? "yes" : "no";
    $("pot-amount").textContent = coinText(hand ? hand.pot : 0);
    const inHand = hand && hand.seats.has(me);
    let state;
    if (table.joining.includes(me) && !inHand) state = "You sit down when the next hand starts.";
    else if (!hand) state = "Waiting for the next hand.";
    else if (hand.over) state = inHand ? "The hand is over; the next one starts soon." : "Waiting for the next hand.";
    else state = inHand ? "The hand is in play." : "You are watching this hand; you play the next one.";
    $("hand-state").textContent = state;

    const seats = $("seats");
    seats.replaceChildren();
    const names = hand ? [...hand.seats.keys()] : table.seated;
    for (const name of names) {
      const seat = hand ? hand.seats.get(name) : { name, cards: [], total: 0, folded: false, connected: true, last: "" };
      const item = el("li", undefined, "seat");
      item.dataset.player = name;
      if (name === me) item.classList.add("me");
      if (seat.folded) item.classList.add("folded");
      if (hand && hand.over && hand.winners.includes(name)) item.classList.add("winner");
      const head = el("p", undefined, "name");
      head.append(el("strong", name === me ? `${name} (you)` : name));
      if (!seat.connected) head.append(el("span", " away", "away"));
      item.append(head);
      const cards = el("p", undefined, "cards");
      for (const card of seat.cards) cards.append(cardNode(card, name === me));
      item.append(cards);
      const facts = [`in the pot ${coinText(seat.total)}`];
      if (seat.folded) facts.push("out");
      else if (seat.last) facts.push(seat.last);
      item.append(el("p", facts.join(" · "), "facts"));
      if (seat.description) item.append(el("p", seat.description, "facts"));
      seats.append(item);
    }

    const result = $("result");
    if (hand && hand.over) {
      let text = `${hand.winners.join(", ") || "nobody"} won`;
      if (typeof hand.delta === "number") text += `; your result: ${hand.delta >= 0 ? "+" : ""}${coinText(hand.delta)}`;
      if (hand.explanation) text += ` (${hand.explanation})`;
      result.textContent = text;
      result.hidden = false;
    } else {
      result.hidden = true;
    }

    const lines = $("log");
    lines.replaceChildren();
    for (const line of [...logLines].reverse()) {
      const item = el("li", line.text);
      item.dataset.seq = String(line.seq);
      lines.append(item);
    }
  }

  function renderTurn() {
    const box = $("turn");
    const actions = $("actions");
    if (!turn || !table || !socket) {
      box.hidden = true;
      actions.replaceChildren();
      return;
    }
    box.hidden = false;
    box.dataset.sent = turn.sent ? "yes" : "no";
    actions.replaceChildren();
    for (const legal of turn.legal || []) actions.append(actionNode(legal));
    tick();
  }

  function actionNode(legal) {
    const row = el("div", undefined, "action");
    const button = el("button", buttonText(legal));
    button.type = "button";
    button.dataset.verb = legal.verb;
    button.disabled = turn.sent;
    let input = null;
    if (AMOUNT_VERBS.has(legal.verb) && Array.isArray(legal.amounts) && legal.amounts.length) {
      input = el("select");
      for (const amount of legal.amounts) {
        const option = el("option", coinText(amount));
        option.value = String(amount);
        input.append(option);
      }
    } else if (AMOUNT_VERBS.has(legal.verb) && typeof legal.min === "number") {
      input = el("input");
      input.type = "number";
      input.min = String(legal.min);
      input.max = String(legal.max);
      input.step = String(legal.step || 1);
      input.value = String(legal.min);
    } else if (Array.isArray(legal.targets) && legal.targets.length) {
      input = el("select");
      for (const target of legal.targets) {
        const option = el("option", target);
        option.value = String(target);
        input.append(option);
      }
    }
    if (input) {
      input.dataset.verb = legal.verb;
      input.disabled = turn.sent;
      input.setAttribute("aria-label", `${legal.verb}: amount`);
    }
    button.addEventListener("click", () => act(legal, input));
    row.append(button);
    if (input) row.append(input);
    if (AMOUNT_VERBS.has(legal.verb) && typeof legal.min === "number" && !legal.amounts) {
      row.append(el("span", `${coinText(legal.min)} to ${coinText(legal.max)}`, "range"));
    }
    return row;
  }

  function buttonText(legal) {
    const word = WORDS[legal.verb] || legal.verb;
    if (!AMOUNT_VERBS.has(legal.verb) && typeof legal.min === "number" && legal.min === legal.max) {
      return `${word} ${coinText(legal.min)}`;
    }
    return word;
  }

  function act(legal, input) {
    if (!turn || turn.sent) return;
    const frame = { type: "act", table: table.id, verb: legal.verb };
    if (input && AMOUNT_VERBS.has(legal.verb)) {
      const amount = Number(input.value);
      const low = typeof legal.min === "number" ? legal.min : -Infinity;
      const high = typeof legal.max === "number" ? legal.max : Infinity;
      if (!Number.isInteger(amount) || amount < low || amount > high) {
        notice(`${legal.verb}: a whole number of coins from ${coinText(legal.min)} to ${coinText(legal.max)}`);
        return;
      }
      frame.amount = amount;
    } else if (input) {
      frame.target = input.value;
    }
    notice("");
    if (request(frame)) {
      turn.sent = true;
      renderTurn();
    }
  }

  function tick() {
    if (!turn) return;
    const left = Math.max(turn.deadline - Date.now() / 1000, 0);
    const whole = Math.max(turn.deadline - turn.received, 0.001);
    $("countdown").textContent = left > 0 ? `${left.toFixed(1)} s left` : "time is up";
    $("clock").value = Math.min(left / whole, 1);
  }

  // -- start ----------------------------------------------------------------------------------

  function start() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    if (fragment.get("token")) {
      sessionStorage.setItem(KEY + "token", fragment.get("token"));
      history.replaceState(null, "", location.pathname + location.search); // off the address bar
    }
    token = sessionStorage.getItem(KEY + "token") || "";
    table = loadTable();
    if (table) {
      const seq = table.seq;
      rebuild(table.events || []);
      table.seq = seq; // what the host sends from (hello's resume)
      render();
    }
    $("login-form").addEventListener("submit", (submit) => {
      submit.preventDefault();
      token = $("token").value.trim();
      if (!token) return;
      sessionStorage.setItem(KEY + "token", token);
      show("login", false);
      notice("");
      retry = 0;
      connect();
    });
    $("refresh").addEventListener("click", () => request({ type: "lobby" }));
    $("leave").addEventListener("click", () => {
      if (table) request({ type: "leave", table: table.id });
    });
    setInterval(tick, 100);
    if (token) connect();
    else show("login", true);
  }

  start();
})();
