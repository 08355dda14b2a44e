// Runs the page's script (tammi_rl/web/static/app.js) in node with a stand-in DOM and a
// scripted server, then prints what the page shows as JSON: the page's logic checked
// without a browser (tests/web/test_page_script.py).
//
//   node page_harness.js APP_JS SCENARIO_JSON
//
// SCENARIO_JSON: {"routes": {"METHOD PATH": [{"status": 200, "body": {...}}, ...]},
//                 "steps": [["set", id, value] | ["call", "newGame"] | ["start"]]}
// Each route answers its replies in order (the last one repeats). Prints
// {"status", "player", "variant", "side", "error", "error_hidden", "requests"}.
"use strict";
const fs = require("fs");
const vm = require("vm");

const [appPath, scenarioText] = process.argv.slice(2);
const scenario = JSON.parse(scenarioText);

class Element {
  constructor(id) {
    this.id = id;
    this.textContent = "";
    this.value = "";
    this.hidden = false;
    this.checked = false;
    this.href = "";
    this.title = "";
    this.className = "";
    this.dataset = {};
    this.style = { setProperty() {} };
    this.classList = { add() {}, remove() {} };
    this.childList = id === "wdl" ? [new Element(), new Element(), new Element()] : [];
    this.listeners = {};
  }
  get children() { return this.childList; }
  replaceChildren(...children) { if (this.id !== "wdl") this.childList = children; }
  appendChild(child) { this.childList.push(child); return child; }
  querySelector() { return (this.inner = this.inner || new Element()); }
  addEventListener(type, listener) { this.listeners[type] = listener; }
}

const elements = {};
const byId = (id) => (elements[id] = elements[id] || new Element(id));
const document = {
  getElementById: byId,
  createElement: () => new Element(),
  createTextNode: (text) => ({ text }),
  addEventListener() {},
};
const requests = [];
const replies = {};
async function fetch(path, options) {
  const key = `${options.method} ${path}`;
  requests.push({ key, body: options.body ? JSON.parse(options.body) : null });
  const queue = scenario.routes[key];
  if (!queue) throw new Error(`no scripted reply for ${key}`);
  const i = Math.min(replies[key] || 0, queue.length - 1);
  replies[key] = i + 1;
  const { status, body } = queue[i];
  return { ok: status >= 200 && status < 300, status, json: async () => body };
}

const context = vm.createContext({ document, fetch, console, setTimeout });
vm.runInContext(fs.readFileSync(appPath, "utf8"), context, { filename: "app.js" });
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

(async () => {
  for (const [what, ...args] of scenario.steps) {
    if (what === "start") await vm.runInContext("start()", context);
    else if (what === "set") byId(args[0]).value = args[1];
    else if (what === "call") await vm.runInContext(`${args[0]}()`, context);
    await settle();
  }
  const error = byId("error");
  console.log(JSON.stringify({
    status: byId("status").textContent,
    player: byId("player").value,
    variant: byId("variant").value,
    side: byId("side").value,
    error: error.textContent,
    error_hidden: error.hidden,
    requests,
  }));
})().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
