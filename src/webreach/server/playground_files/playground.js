// The playground's script: no framework, no build step, nothing from another origin.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY_STORE = "webreach-playground-key";
const turns = [];

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function link(url, text) {
  // Only web links become anchors: a source URL is data, never a script to run.
  if (!/^https?:\/\//i.test(url)) return el("span", "", text);
  const a = el("a", "", text);
  a.href = url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  return a;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

// An error body as one line: its status, its code (or type) and the field it names, then
// its message, so a refused field reads as such: "HTTP 400 INVALID_ARGUMENTS (queries): …".
async function failure(response) {
  if (response.status === 401) $("key-needed").hidden = false;
  const text = await response.text();
  let error;
  try {
    error = JSON.parse(text).error;
  } catch {
    error = undefined;
  }
  if (!error || typeof error !== "object") return `HTTP ${response.status}: ${text.slice(0, 300)}`;
  const code = error.code || error.type;
  const head = [`HTTP ${response.status}`, code, error.param && `(${error.param})`];
  return `${head.filter(Boolean).join(" ")}: ${error.message || JSON.stringify(error)}`;
}

// Server-sent events, read from the fetch body: events end at a blank line, and each
// `data:` line of one event is joined with "\n"; comments (": keep-alive") are skipped.
// A reader left early (an error event) is cancelled, so the connection is not held open.
async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""));
        if (data.length) yield JSON.parse(data.join("\n"));
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function sourceList(sources, list) {
  for (const source of sources) {
    const item = el("li");
    item.append(link(source.url, source.title || source.url));
    if (source.snippet) item.append(el("span", "snippet", source.snippet));
    list.append(item);
  }
}

// The answer with each cited span linked and numbered as its source is listed (a URL not
// listed gets the next number); indices count Unicode code points, not UTF-16 units.
function renderAnswer(node, text, annotations, listed) {
  const points = Array.from(text);
  node.replaceChildren();
  let at = 0;
  const sorted = [...annotations].sort((a, b) => a.start_index - b.start_index);
  const numbers = [...listed];
  sorted.forEach((note) => {
    if (note.start_index < at || note.end_index > points.length) return;
    node.append(points.slice(at, note.start_index).join(""));
    node.append(link(note.url, points.slice(note.start_index, note.end_index).join("")));
    const sup = el("sup");
    if (!numbers.includes(note.url)) numbers.push(note.url);
    sup.append(link(note.url, `[${numbers.indexOf(note.url) + 1}]`));
    node.append(sup);
    at = note.end_index;
  });
  node.append(points.slice(at).join(""));
}

function usageLine(usage) {
  const parts = [`${usage.input_tokens} input`, `${usage.output_tokens} output tokens`];
  const tools = usage.server_tool_use;
  const n = tools ? tools.web_search_requests : 0;
  if (tools) parts.push(`${n} web search${n === 1 ? "" : "es"}`);
  return "Usage: " + parts.join(" · ");
}

// One turn: the whole conversation so far goes as the input (the server keeps nothing between
// turns). A turn refused before it starts leaves the question in its box; one that fails on the
// way stays on the page, marked failed, and is not sent as context again.
async function ask(question) {
  const body = {
    model: $("model").value.trim() || "default",
    input: [...turns, { role: "user", content: question }],
    stream: true,
    tools: [{ type: "web_search" }],
  };
  const response = await fetch("/v1/responses", {
    method: "POST",
    headers: headers(),
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await failure(response));
  $("question").value = "";
  const turn = el("div", "turn");
  const steps = el("ul", "steps");
  const answer = el("div", "answer");
  const sources = el("ol", "sources");
  const usage = el("p", "usage");
  turn.append(el("p", "question", question), steps, answer, sources, usage);
  $("conversation").append(turn);
  try {
    const text = await readTurn(response, { steps, answer, sources, usage });
    turns.push({ role: "user", content: question }, { role: "assistant", content: text });
  } catch (error) {
    turn.classList.add("failed");
    throw error;
  }
}

// The turn's events onto the page; the answer's text once the response completed.
async function readTurn(response, { steps, answer, sources, usage }) {
  const calls = new Map();
  let text = "";
  let annotations = [];
  const listed = [];
  for await (const event of sseEvents(response.body)) {
    const item = event.item;
    if (event.type === "response.output_item.added" && item.type === "web_search_call") {
      const queries = (item.action && item.action.queries) || [];
      const step = el("li", "running", "Searching the web: " + queries.join(" · ") + " …");
      step.dataset.id = item.id;
      calls.set(item.id, { step, queries });
      steps.append(step);
    } else if (event.type === "response.output_item.done" && item.type === "web_search_call") {
      const call = calls.get(item.id);
      const found = (item.action && item.action.sources) || [];
      if (call) {
        call.step.className = "done";
        call.step.textContent = `Searched: ${call.queries.join(" · ")} (${found.length} sources)`;
      }
      sourceList(found, sources);
      listed.push(...found.map((source) => source.url));
    } else if (event.type === "response.output_text.delta") {
      text += event.delta;
      renderAnswer(answer, text, annotations, listed);
    } else if (event.type === "response.output_text.annotation.added") {
      annotations = [...annotations, event.annotation];
      renderAnswer(answer, text, annotations, listed);
    } else if (event.type === "response.completed") {
      usage.textContent = usageLine(event.response.usage);
      return text;
    } else if (event.type === "response.failed" || event.type === "error") {
      const error = event.response ? event.response.error : event;
      throw new Error((error && error.message) || "the response failed");
    }
  }
  throw new Error("the stream ended before the response completed");
}

async function search(query) {
  $("search-results").replaceChildren();
  const response = await fetch("/v1/search", {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({ queries: [query] }),
  });
  if (!response.ok) throw new Error(await failure(response));
  const result = await response.json();
  sourceList(result.sources, $("search-results"));
}

async function fetchPage(url) {
  $("fetch-meta").textContent = "";
  $("fetch-content").textContent = "";
  const response = await fetch("/v1/fetch", {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({ url }),
  });
  if (!response.ok) throw new Error(await failure(response));
  const page = await response.json();
  $("fetch-meta").textContent = `HTTP ${page.status_code} · ${page.title || page.url}`;
  $("fetch-content").textContent = page.content;
}

function handle(formId, run) {
  $(formId).addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = event.target.querySelector("button");
    button.disabled = true;
    showError("");
    try {
      await run();
    } catch (error) {
      showError(error.message);
    } finally {
      button.disabled = false;
    }
  });
}

function choose(tab) {
  for (const name of ["chat", "search", "fetch"]) {
    $("tab-" + name).setAttribute("aria-selected", String(name === tab));
    $("panel-" + name).hidden = name !== tab;
  }
  showError("");
}

async function firstModel() {
  const response = await fetch("/v1/models", { headers: headers() });
  if (response.status === 401) $("key-needed").hidden = false;
  if (!response.ok) return;
  const listing = await response.json();
  if (!$("model").value && listing.data && listing.data.length) $("model").value = listing.data[0].id;
}

document.addEventListener("DOMContentLoaded", () => {
  $("key").value = sessionStorage.getItem(KEY_STORE) || "";
  $("key").addEventListener("change", () => {
    sessionStorage.setItem(KEY_STORE, $("key").value.trim());
    $("key-needed").hidden = true;
    firstModel().catch(() => {});
  });
  for (const name of ["chat", "search", "fetch"]) {
    $("tab-" + name).addEventListener("click", () => choose(name));
  }
  handle("chat-form", () => ask($("question").value.trim()));
  handle("search-form", () => search($("search-query").value.trim()));
  handle("fetch-form", () => fetchPage($("fetch-url").value.trim()));
  firstModel().catch(() => {});
});
