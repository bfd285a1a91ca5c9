// The official Node SDKs' stream helpers (`openai`, `@anthropic-ai/sdk`) against a running
// webreach server: `responses.stream`, `chat.completions.stream` and `messages.stream`, each
// read to its final object.
//
//   node node_sdks.mjs <server url ending in /v1> <case>
//
// Prints one JSON object: what a user of the SDK sees after each turn (text, citations), or
// the error the SDK raised. tests/suites/test_clients_node_sdks.py runs it.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

import { describeError, main } from "./common.mjs";

const QUESTION = "How many people live in Iceland?";
const FOLLOW_UP = "And what is its capital?";
const WEATHER_QUESTION = "Weather in Reykjavík?";
const ARTICLE_URL = "https://example.com/article";

const weather = (city) => `5 °C and windy in ${city}`;
const WEATHER_PARAMETERS = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
};

function openai(url) {
  return new OpenAI({ baseURL: url, apiKey: "test-key", maxRetries: 0 });
}

function anthropic(url) {
  return new Anthropic({ baseURL: url.replace(/\/v1$/, ""), apiKey: "test-key", maxRetries: 0 });
}

// Each turn is a function of the turns before; a failed turn ends the conversation.
async function conversation(...turns) {
  const done = [];
  for (const next of turns) {
    try {
      done.push(await next(done));
    } catch (error) {
      done.push({ error: describeError(error) });
      break;
    }
  }
  return { turns: done.map(({ keep, ...seen }) => seen) };
}

// --- Responses: client.responses.stream(...).finalResponse() ---------------------------------

const RESPONSES_SEARCH = [{ type: "web_search" }];
const RESPONSES_WEATHER = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city.",
  parameters: WEATHER_PARAMETERS,
};

async function responsesTurn(url, body) {
  const stream = openai(url).responses.stream({ model: "test-model", ...body });
  const response = await stream.finalResponse();
  const messages = response.output.filter((item) => item.type === "message");
  return {
    id: response.id,
    status: response.status,
    text: response.output_text,
    outputTypes: response.output.map((item) => item.type),
    citations: messages.flatMap((m) =>
      m.content.flatMap((part) =>
        (part.annotations ?? []).map((a) => ({
          type: a.type,
          url: a.url,
          title: a.title,
          cited: response.output_text.slice(a.start_index, a.end_index),
        })),
      ),
    ),
    functionCalls: response.output
      .filter((item) => item.type === "function_call")
      .map((item) => ({ name: item.name, arguments: JSON.parse(item.arguments) })),
    keep: { input: body.input, output: response.output },
  };
}

// A turn of the stateless kind: the whole conversation so far, then the new items.
const resend = (turns, ...items) => [
  ...(Array.isArray(turns.at(-1).keep.input)
    ? turns.at(-1).keep.input
    : [{ role: "user", content: turns.at(-1).keep.input }]),
  ...turns.at(-1).keep.output,
  ...items,
];

// --- Chat: client.chat.completions.stream(...).finalChatCompletion() ------------------------

const CHAT_SEARCH = [{ type: "deepseek_web_search" }];
const CHAT_WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: WEATHER_PARAMETERS,
  },
};

async function chatTurn(url, body) {
  const stream = openai(url).chat.completions.stream({ model: "test-model", ...body });
  const completion = await stream.finalChatCompletion();
  const message = completion.choices[0].message;
  const text = message.content ?? "";
  return {
    text,
    finishReason: completion.choices[0].finish_reason,
    citations: (message.annotations ?? []).map((a) => ({
      type: a.type,
      url: a.url_citation?.url,
      title: a.url_citation?.title,
      cited: [...text].slice(a.url_citation?.start_index, a.url_citation?.end_index).join(""),
    })),
    serverToolCalls: (message.server_tool_calls ?? []).flatMap((step) =>
      step.calls.map((c) => c.kind),
    ),
    functionCalls: (message.tool_calls ?? []).map((c) => ({
      id: c.id,
      name: c.function.name,
      arguments: JSON.parse(c.function.arguments),
    })),
    keep: { messages: [...body.messages, message] },
  };
}

// --- Messages: client.messages.stream(...).finalMessage() -----------------------------------

const MESSAGES_SEARCH = [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }];
const MESSAGES_FETCH = [{ type: "web_fetch_20250910", name: "web_fetch", max_uses: 2 }];
const MESSAGES_WEATHER = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: WEATHER_PARAMETERS,
};

async function messagesTurn(url, body) {
  const stream = anthropic(url).messages.stream({ model: "test-model", max_tokens: 1024, ...body });
  const message = await stream.finalMessage();
  const texts = message.content.filter((block) => block.type === "text");
  return {
    text: texts.map((block) => block.text).join(""),
    stopReason: message.stop_reason,
    blockTypes: message.content.map((block) => block.type),
    citations: texts.flatMap((block) =>
      (block.citations ?? []).map((c) => ({
        type: c.type,
        url: c.url,
        title: c.title,
        cited: c.cited_text,
      })),
    ),
    functionCalls: message.content
      .filter((block) => block.type === "tool_use")
      .map((block) => ({ id: block.id, name: block.name, arguments: block.input })),
    keep: { messages: [...body.messages, { role: "assistant", content: message.content }] },
  };
}

const CASES = {
  "responses-stream": (url) =>
    conversation(() => responsesTurn(url, { input: QUESTION, tools: RESPONSES_SEARCH })),
  // The SDK's documented way to chain turns: previous_response_id (store defaults to true).
  "responses-two-turns-previous-response-id": (url) =>
    conversation(
      () => responsesTurn(url, { input: QUESTION, tools: RESPONSES_SEARCH }),
      (turns) =>
        responsesTurn(url, {
          input: FOLLOW_UP,
          previous_response_id: turns[0].id,
          tools: RESPONSES_SEARCH,
        }),
    ),
  // The stateless way: earlier output items sent back as they came.
  "responses-two-turns-resend": (url) =>
    conversation(
      () => responsesTurn(url, { input: QUESTION, tools: RESPONSES_SEARCH }),
      (turns) =>
        responsesTurn(url, {
          input: resend(turns, { role: "user", content: FOLLOW_UP }),
          tools: RESPONSES_SEARCH,
        }),
    ),
  "responses-function-tool": (url) => {
    const tools = [...RESPONSES_SEARCH, RESPONSES_WEATHER];
    return conversation(
      () => responsesTurn(url, { input: WEATHER_QUESTION, tools }),
      (turns) => {
        const call = turns[0].keep.output.find((item) => item.type === "function_call");
        const output = weather(JSON.parse(call.arguments).city);
        return responsesTurn(url, {
          input: resend(turns, { type: "function_call_output", call_id: call.call_id, output }),
          tools,
        });
      },
    );
  },
  "chat-stream": (url) =>
    conversation(() =>
      chatTurn(url, { messages: [{ role: "user", content: QUESTION }], tools: CHAT_SEARCH }),
    ),
  // OpenAI's own way to ask Chat Completions for search: `web_search_options`, no tool.
  "chat-stream-web-search-options": (url) =>
    conversation(() =>
      chatTurn(url, {
        messages: [{ role: "user", content: QUESTION }],
        web_search_options: {},
      }),
    ),
  "chat-two-turns": (url) =>
    conversation(
      () => chatTurn(url, { messages: [{ role: "user", content: QUESTION }], tools: CHAT_SEARCH }),
      (turns) =>
        chatTurn(url, {
          messages: [...turns[0].keep.messages, { role: "user", content: FOLLOW_UP }],
          tools: CHAT_SEARCH,
        }),
    ),
  "chat-function-tool": (url) => {
    const tools = [...CHAT_SEARCH, CHAT_WEATHER];
    return conversation(
      () =>
        chatTurn(url, { messages: [{ role: "user", content: WEATHER_QUESTION }], tools }),
      (turns) => {
        const [call] = turns[0].functionCalls;
        const result = { role: "tool", tool_call_id: call.id, content: weather(call.arguments.city) };
        return chatTurn(url, { messages: [...turns[0].keep.messages, result], tools });
      },
    );
  },
  "messages-stream": (url) =>
    conversation(() =>
      messagesTurn(url, { messages: [{ role: "user", content: QUESTION }], tools: MESSAGES_SEARCH }),
    ),
  "messages-two-turns": (url) =>
    conversation(
      () =>
        messagesTurn(url, {
          messages: [{ role: "user", content: QUESTION }],
          tools: MESSAGES_SEARCH,
        }),
      (turns) =>
        messagesTurn(url, {
          messages: [...turns[0].keep.messages, { role: "user", content: FOLLOW_UP }],
          tools: MESSAGES_SEARCH,
        }),
    ),
  "messages-function-tool": (url) => {
    const tools = [...MESSAGES_SEARCH, MESSAGES_WEATHER];
    return conversation(
      () =>
        messagesTurn(url, { messages: [{ role: "user", content: WEATHER_QUESTION }], tools }),
      (turns) => {
        const [call] = turns[0].functionCalls;
        const result = {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: call.id, content: weather(call.arguments.city) },
          ],
        };
        return messagesTurn(url, { messages: [...turns[0].keep.messages, result], tools });
      },
    );
  },
  "messages-fetch-two-turns": (url) =>
    conversation(
      () =>
        messagesTurn(url, {
          messages: [{ role: "user", content: `Summarise ${ARTICLE_URL}, please.` }],
          tools: MESSAGES_FETCH,
        }),
      (turns) =>
        messagesTurn(url, {
          messages: [
            ...turns[0].keep.messages,
            { role: "user", content: "Quote its first sentence." },
          ],
          tools: MESSAGES_FETCH,
        }),
    ),
};

await main(CASES);
