// The Vercel AI SDK (`ai` with `@ai-sdk/openai` and `@ai-sdk/anthropic`) against a running
// webreach server, with each provider's own web tools and the SDK's defaults.
//
//   node ai_sdk.mjs <server url ending in /v1> <case>
//
// Prints one JSON object: what a user of the SDK sees after each turn (text, sources, the
// tool calls the SDK ran), or the error the SDK raised. tests/suites/test_clients_ai_sdk.py runs
// it.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

import { describeError, main } from "./common.mjs";

// The SDK's warnings (an unknown model's output limit, say) are not what is tested.
globalThis.AI_SDK_LOG_WARNINGS = false;

const QUESTION = "How many people live in Iceland?";
const FOLLOW_UP = "And what is its capital?";
const ARTICLE_URL = "https://example.com/article";

function openaiProvider(url) {
  return createOpenAI({ baseURL: url, apiKey: "test-key" });
}

function anthropicProvider(url) {
  return createAnthropic({ baseURL: url, apiKey: "test-key" });
}

// A client function tool the scripted model calls; the SDK runs it and continues.
const weatherCalls = [];
const getWeather = tool({
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    weatherCalls.push(city);
    return `5 °C and windy in ${city}`;
  },
});

// One turn, streamed or not; the result a user reads, and the messages to send back.
async function turn(stream, options) {
  if (!stream) {
    const result = await generateText(options);
    return summary(result, result.response.messages);
  }
  const errors = [];
  const result = streamText({ ...options, onError: ({ error }) => errors.push(error) });
  let streamed = "";
  for await (const delta of result.textStream) {
    streamed += delta;
  }
  if (errors.length > 0) {
    throw errors[0];
  }
  const response = await result.response;
  const out = summary(
    {
      text: await result.text,
      reasoningText: await result.reasoningText,
      sources: await result.sources,
      steps: await result.steps,
      finishReason: await result.finishReason,
    },
    response.messages,
  );
  out.streamed = streamed;
  return out;
}

function summary(result, messages) {
  return {
    text: result.text,
    reasoning: result.reasoningText ?? "",
    finishReason: result.finishReason,
    sources: (result.sources ?? []).map((s) => ({ url: s.url, title: s.title ?? null })),
    toolCalls: result.steps.flatMap((step) =>
      step.toolCalls.map((c) => ({ name: c.toolName, providerExecuted: !!c.providerExecuted })),
    ),
    toolResults: result.steps.flatMap((step) =>
      step.toolResults.map((r) => ({
        name: r.toolName,
        output: r.output,
        providerExecuted: !!r.providerExecuted,
      })),
    ),
    messages,
  };
}

// Runs the turns one after another, each with the SDK's own history of the turns before.
async function conversation(stream, base, prompts) {
  const turns = [];
  let history = [];
  for (const prompt of prompts) {
    history = [...history, { role: "user", content: prompt }];
    let done;
    try {
      done = await turn(stream, { ...base, messages: history });
    } catch (error) {
      turns.push({ error: describeError(error) });
      break;
    }
    history = [...history, ...done.messages];
    delete done.messages;
    turns.push(done);
  }
  return { turns, weatherCalls };
}

const openaiSearch = (url, extra = {}) => ({
  model: openaiProvider(url).responses("test-model"),
  tools: { web_search: openaiProvider(url).tools.webSearch({}) },
  ...extra,
});

const anthropicSearch = (url) => ({
  model: anthropicProvider(url)("test-model"),
  tools: { web_search: anthropicProvider(url).tools.webSearch_20250305({ maxUses: 3 }) },
});

const anthropicFetch = (url) => ({
  model: anthropicProvider(url)("test-model"),
  tools: { web_fetch: anthropicProvider(url).tools.webFetch_20250910({ maxUses: 2 }) },
});

const withWeather = (options) => ({
  ...options,
  tools: { ...options.tools, get_weather: getWeather },
  stopWhen: stepCountIs(5),
});

const stateless = { providerOptions: { openai: { store: false } } };
// "test-model" is no model the SDK knows to reason: `forceReasoning` sends `reasoning` anyway.
const thinking = {
  providerOptions: {
    openai: { forceReasoning: true, reasoningEffort: "low", reasoningSummary: "auto" },
  },
};

// Each case runs with generateText as `<case>` and with streamText as `<case>-stream`.
const ASK_WEATHER = ["Weather in Reykjavík?"];
const READ = [`Summarise ${ARTICLE_URL}, please.`];
const QUOTE = [...READ, "Quote its first sentence."];
const CONVERSATIONS = {
  "openai-search": (url, stream) => conversation(stream, openaiSearch(url), [QUESTION]),
  "openai-two-turns": (url, stream) =>
    conversation(stream, openaiSearch(url), [QUESTION, FOLLOW_UP]),
  "openai-two-turns-store-false": (url, stream) =>
    conversation(stream, openaiSearch(url, stateless), [QUESTION, FOLLOW_UP]),
  // Whether the model calls the tool before or after searching is the upstream script's choice.
  "openai-function-tool": (url, stream) =>
    conversation(stream, withWeather(openaiSearch(url)), ASK_WEATHER),
  "openai-function-tool-store-false": (url, stream) =>
    conversation(stream, withWeather(openaiSearch(url, stateless)), ASK_WEATHER),
  "openai-reasoning": (url, stream) => conversation(stream, openaiSearch(url, thinking), [QUESTION]),
  "anthropic-search": (url, stream) => conversation(stream, anthropicSearch(url), [QUESTION]),
  "anthropic-two-turns": (url, stream) =>
    conversation(stream, anthropicSearch(url), [QUESTION, FOLLOW_UP]),
  "anthropic-function-tool": (url, stream) =>
    conversation(stream, withWeather(anthropicSearch(url)), ASK_WEATHER),
  "anthropic-fetch": (url, stream) => conversation(stream, anthropicFetch(url), READ),
  "anthropic-fetch-two-turns": (url, stream) => conversation(stream, anthropicFetch(url), QUOTE),
};

const CASES = Object.fromEntries(
  Object.entries(CONVERSATIONS).flatMap(([name, run]) => [
    [name, (url) => run(url, false)],
    [`${name}-stream`, (url) => run(url, true)],
  ]),
);

await main(CASES);
