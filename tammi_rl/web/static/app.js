// The tammi-rl page: draws what the server says and sends the clicks back.
// It knows no rule of any variant: the legal hops, the board and the record all come
// from the JSON API (tammi_rl/web/app.py).
"use strict";

const page = {
  variants: {},      // name -> variant (with its default_player)
  game: null,        // the last state the server sent
  selected: null,    // internal square of the piece picked to move, or null
  busy: false,
  version: 0,
};

const $ = (id) => document.getElementById(id);

// --- talking to the server -------------------------------------------------------------
async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    throw new Error(`the server answered ${response.status} without JSON`);
  }
  if (!response.ok) {
    const error = new Error(data && data.error ? data.error : `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

function setBusy(busy, text) {
  page.busy = busy;
  $("board").dataset.busy = busy ? "1" : "0";
  if (text) $("status").textContent = text;
}

// Run one request that returns a game state; show it, or show the error.
async function act(method, path, body, busyText) {
  if (page.busy) return;
  setBusy(true, busyText);
  try {
    const state = await api(method, path, body);
    showError("");
    show(state);
  } catch (error) {
    showError(error.message);
    showOngoing();
    setBusy(false);
    return;
  }
  setBusy(false);
  if (page.game && page.game.turn === "agent") agentMove();
}

function gamePath(suffix) {
  return `/api/games/${encodeURIComponent(page.game.id)}${suffix}`;
}

function agentMove() {
  act("POST", gamePath("/agent"), undefined, `${page.game.player_name} is thinking...`);
}

function settings() {
  const body = {
    variant: $("variant").value,
    side: $("side").value,
    player: $("player").value.trim(),
  };
  const plies = $("max-plies").value.trim();
  if (plies) body.max_plies = Number(plies);
  return body;
}

async function newGame(extra) {
  const body = Object.assign(settings(), extra || {});
  if (!page.game) {
    await act("POST", "/api/games", body, "starting...");
    return;
  }
  if (page.busy) return;
  setBusy(true, "starting...");
  try {
    let state;
    try {
      state = await api("POST", gamePath("/new"), body);
    } catch (error) {
      if (error.status !== 404) throw error;
      state = await api("POST", "/api/games", body); // the session was dropped: open another
    }
    showError("");
    show(state);
  } catch (error) {
    showError(error.message); // the game goes on: its status and settings, not the refused ones
    showOngoing();
  }
  setBusy(false);
  if (page.game && page.game.turn === "agent") agentMove();
}

// After a refused request, show the game still being played again (its status line, its
// variant, side and opponent in the form), or say that there is none.
function showOngoing() {
  if (page.game) show(page.game);
  else $("status").textContent = "no game: change the settings and press New game";
}

// --- drawing -------------------------------------------------------------------------------
function show(state) {
  page.game = state;
  page.selected = null;
  if (state.chain.length) page.selected = state.chain[state.chain.length - 1];
  drawBoard();
  drawStatus();
  drawAnalysis();
  drawMoves();
  $("fen").value = state.fen;
  $("pdn-link").href = gamePath("/pdn");
  $("variant").value = state.variant.name;
  $("side").value = state.human;
  $("player").value = state.player;
}

function drawStatus() {
  const g = page.game;
  let text;
  if (g.result) {
    text = `Game over: ${g.result.text}`;
  } else if (g.turn === "human") {
    text = `Your move (${g.side})`;
    if (g.chain.length) text += ": continue the capture";
  } else {
    text = `${g.player_name} to move (${g.side})`;
  }
  $("status").textContent = text;
}

function heatValues() {
  const g = page.game;
  const values = new Map();
  if (!g.analysis || !$("heat").checked) return values;
  const mode = $("heat-mode").value;
  let total = 0;
  for (const h of g.analysis.hops) total += h[mode];
  if (total <= 0) return values;
  for (const h of g.analysis.hops) {
    if (h[mode] > 0) values.set(h.to, (values.get(h.to) || 0) + h[mode] / total);
  }
  return values;
}

function drawBoard() {
  const g = page.game;
  const size = g.variant.board_size;
  const flip = g.human === "black";
  const board = $("board");
  board.replaceChildren();
  board.style.setProperty("--size", size);
  board.dataset.size = size;
  board.dataset.geometry = g.variant.geometry;

  const bySquare = new Map();
  for (const s of g.squares) bySquare.set(`${s.row},${s.col}`, s);
  const movable = new Set(g.hops.map((h) => h.from));
  const targets = new Set(g.hops.filter((h) => h.from === page.selected).map((h) => h.to));
  const lastPath = new Set(g.last_move ? g.last_move.path : g.chain);
  const captured = new Set(g.last_move ? g.last_move.captures : g.jumped);
  const heat = heatValues();

  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const row = flip ? y : size - 1 - y;
      const col = flip ? size - 1 - x : x;
      const cell = document.createElement("div");
      cell.className = "cell";
      const square = bySquare.get(`${row},${col}`);
      if (!square) {
        cell.classList.add("light");
        board.appendChild(cell);
        continue;
      }
      cell.classList.add("square");
      cell.dataset.sq = square.sq;
      cell.dataset.name = square.name;
      cell.dataset.piece = square.piece || "";
      cell.title = square.name;
      if (lastPath.has(square.sq)) cell.classList.add("last");
      if (captured.has(square.sq)) cell.classList.add("captured");
      if (movable.has(square.sq)) cell.classList.add("movable");
      if (square.sq === page.selected) cell.classList.add("selected");
      if (targets.has(square.sq)) cell.classList.add("target");
      if (heat.has(square.sq)) {
        const v = heat.get(square.sq);
        cell.style.setProperty("--heat", Math.min(1, 0.15 + 0.85 * v).toFixed(3));
        cell.classList.add("hot");
        const label = document.createElement("span");
        label.className = "heat-label";
        label.textContent = `${Math.round(100 * v)}%`;
        cell.appendChild(label);
      }
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = square.name;
      cell.appendChild(name);
      if (square.piece) {
        const piece = document.createElement("div");
        const colour = square.piece.toLowerCase() === "w" ? "white" : "black";
        piece.className = `piece ${colour}`;
        if (square.piece === "W" || square.piece === "B") piece.classList.add("king");
        cell.appendChild(piece);
      }
      cell.addEventListener("click", () => clickSquare(square.sq));
      board.appendChild(cell);
    }
  }
  page.version += 1;
  board.dataset.version = page.version;
  board.dataset.turn = g.turn;
  board.dataset.plies = g.plies;
  board.dataset.chain = g.chain.length;
  board.dataset.over = g.result ? "1" : "0";
}

function clickSquare(sq) {
  const g = page.game;
  if (!g || page.busy || g.turn !== "human") return;
  const hops = g.hops;
  if (page.selected !== null && hops.some((h) => h.from === page.selected && h.to === sq)) {
    act("POST", gamePath("/hop"), { from: page.selected, to: sq });
    return;
  }
  if (g.chain.length) return; // mid-capture the same piece must go on
  page.selected = hops.some((h) => h.from === sq) ? sq : null;
  drawBoard();
}

// Text as one span per word, so a line breaks between moves, never inside one (c3-d4).
function setTokens(element, text) {
  element.replaceChildren();
  text.split(" ").forEach((word, i) => {
    if (i) element.appendChild(document.createTextNode(" "));
    const span = document.createElement("span");
    span.className = "token";
    span.textContent = word;
    element.appendChild(span);
  });
}

function percent(x) {
  return `${(100 * x).toFixed(1)}%`;
}

function drawAnalysis() {
  const a = page.game.analysis;
  const bar = $("wdl");
  const [win, draw, loss] = bar.children;
  const tbody = $("hop-table").querySelector("tbody");
  tbody.replaceChildren();
  if (!a) {
    $("analysis-who").textContent = "";
    win.style.width = "0"; draw.style.width = "100%"; loss.style.width = "0";
    draw.textContent = "";
    $("value-text").textContent = "no search yet";
    for (const id of ["an-move", "an-depth", "an-nodes", "an-time"]) $(id).textContent = "-";
    setTokens($("pv"), "-");
    return;
  }
  $("analysis-who").textContent = `(${a.agent}, ${a.hint ? "hint for" : "playing"} ${a.side})`;
  const wdl = a.wdl || [(1 + a.value) / 2, 0, (1 - a.value) / 2];
  win.style.width = percent(wdl[0]); draw.style.width = percent(wdl[1]); loss.style.width = percent(wdl[2]);
  win.textContent = wdl[0] >= 0.12 ? `W ${Math.round(100 * wdl[0])}` : "";
  draw.textContent = wdl[1] >= 0.12 ? `D ${Math.round(100 * wdl[1])}` : "";
  loss.textContent = wdl[2] >= 0.12 ? `L ${Math.round(100 * wdl[2])}` : "";
  const sign = a.value >= 0 ? "+" : "";
  $("value-text").textContent = `value ${sign}${a.value.toFixed(3)} for ${a.side}` + (a.wdl ? "" : " (no WDL head)");
  $("an-move").textContent = a.move;
  $("an-depth").textContent = a.depth;
  $("an-nodes").textContent = a.nodes;
  $("an-time").textContent = `${a.elapsed_s.toFixed(2)} s`;
  setTokens($("pv"), a.pv.join(" ") || "-");
  const hops = [...a.hops].sort((p, q) => q.share - p.share || q.visits - p.visits);
  for (const h of hops) {
    const tr = document.createElement("tr");
    for (const text of [h.text, percent(h.share), String(h.visits), percent(h.prior)]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
}

function drawMoves() {
  const g = page.game;
  const first = g.variant.first_player;
  $("first-name").textContent = first;
  $("second-name").textContent = first === "white" ? "black" : "white";
  const tbody = $("moves").querySelector("tbody");
  tbody.replaceChildren();
  for (const row of g.moves) {
    const tr = document.createElement("tr");
    for (const text of [`${row.number}.`, row.first || "...", row.second || ""]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
  const result = g.result ? ` ${g.result.pdn}` : "";
  setTokens($("movetext"), (g.movetext + result).trim() || "(no moves yet)");
}

// --- wiring -----------------------------------------------------------------------------------
async function start() {
  try {
    const data = await api("GET", "/api/variants");
    const select = $("variant");
    for (const v of data.variants) {
      page.variants[v.name] = v;
      const option = document.createElement("option");
      option.value = v.name;
      option.textContent = `${v.name} (${v.board_size}x${v.board_size})`;
      select.appendChild(option);
    }
    select.value = data.default_variant;
    $("player").value = page.variants[data.default_variant].default_player;
  } catch (error) {
    showError(error.message);
    return;
  }
  $("variant").addEventListener("change", () => {
    $("player").value = page.variants[$("variant").value].default_player;
  });
  $("settings").addEventListener("submit", (event) => {
    event.preventDefault();
    newGame();
  });
  $("fen-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (page.game) act("POST", gamePath("/position"), { fen: $("fen").value }, "setting the position...");
  });
  $("undo").addEventListener("click", () => page.game && act("POST", gamePath("/undo")));
  $("hint").addEventListener("click", () => page.game && act("POST", gamePath("/hint"), undefined, "analysing..."));
  $("heat").addEventListener("change", () => page.game && drawBoard());
  $("heat-mode").addEventListener("change", () => page.game && drawBoard());
  newGame();
}

document.addEventListener("DOMContentLoaded", start);
