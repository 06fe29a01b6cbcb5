// An OpenAI-compatible chat-completions server over node-llama-cpp, for the LLM module's tests.
// It runs a real GGUF model on the CPU (tests use the random-weight model make_model.py writes),
// so every answer is real inference: prompt evaluation, sampling, grammar-constrained JSON and
// token counts all happen for real. Nothing is canned.
//
// Usage: node server.mjs --model FILE.gguf [--port N]   (port 0: any free port)
// Prints one line "listening PORT" on stdout once the model is loaded.
//
// Endpoint: POST /v1/chat/completions with OpenAI's body: model, messages (string content or
// [{type:"text"}, {type:"image_url"}] parts; images are counted, not seen: the model has no
// vision), temperature, seed, max_tokens or max_completion_tokens, response_format
// {type:"text"|"json_object"|"json_schema"}. json_object is constrained to a bounded JSON object
// grammar so an answer always parses within max_tokens; json_schema uses the schema given.
// GET /v1/models lists the one model. Requests are served one at a time (one context sequence).
import http from "node:http";
import { getLlama, LlamaCompletion } from "node-llama-cpp";

function argValue(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const modelPath = argValue("--model");
if (!modelPath) {
  console.error("usage: node server.mjs --model FILE.gguf [--port N]");
  process.exit(2);
}
const port = Number(argValue("--port", "0"));
const MAX_BODY = 32 * 1024 * 1024;

// One thread: the model is tiny, and spinning worker threads on a shared CI machine cost far more
// than they give.
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error", maxThreads: 1 });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 2048, sequences: 1, threads: 1, batchSize: 512 });
const sequence = context.getSequence();
const completion = new LlamaCompletion({ contextSequence: sequence });

// A JSON object of at most 3 short string / boolean / integer fields: always closes well within a
// few dozen tokens, so a bounded max_tokens still yields JSON that parses.
const boundedObjectGrammar = await llama.createGrammarForJsonSchema({
  type: "object",
  additionalProperties: { oneOf: [{ type: "string", maxLength: 12 }, { type: "boolean" }, { type: "integer" }] },
  maxProperties: 3,
});

function messageText(messages) {
  let images = 0;
  const lines = [];
  for (const m of messages) {
    if (typeof m.content === "string") {
      lines.push(`${m.role}: ${m.content}`);
    } else if (Array.isArray(m.content)) {
      const parts = [];
      for (const p of m.content) {
        if (p.type === "text") parts.push(p.text);
        else if (p.type === "image_url") images += 1;
      }
      lines.push(`${m.role}: ${parts.join("\n")}`);
    } else {
      throw new Error("message content must be a string or an array of parts");
    }
  }
  lines.push("assistant:");
  return { text: lines.join("\n"), images };
}

let queue = Promise.resolve();

async function complete(req) {
  if (!Array.isArray(req.messages) || req.messages.length === 0) throw new Error("messages must be a non-empty array");
  const { text } = messageText(req.messages);
  const maxTokens = Number(req.max_completion_tokens ?? req.max_tokens ?? 64);
  const format = req.response_format?.type ?? "text";
  let grammar;
  if (format === "json_object") grammar = boundedObjectGrammar;
  else if (format === "json_schema") grammar = await llama.createGrammarForJsonSchema(req.response_format.json_schema.schema);
  else if (format !== "text") throw new Error(`unknown response_format ${format}`);

  await sequence.clearHistory();
  const promptTokens = model.tokenize(text).length + 1; // + BOS
  let completionTokens = 0;
  const answer = await completion.generateCompletion(text, {
    maxTokens,
    temperature: Number(req.temperature ?? 0),
    seed: req.seed === undefined ? undefined : Number(req.seed),
    grammar,
    onToken(tokens) { completionTokens += tokens.length; },
  });
  const finish = completionTokens >= maxTokens ? "length" : "stop";
  return {
    id: `chatcmpl-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: req.model ?? "local",
    choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: finish }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

function reply(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/v1/models") {
    reply(res, 200, { object: "list", data: [{ id: "local", object: "model" }] });
    return;
  }
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
    reply(res, 404, { error: { message: "not found" } });
    return;
  }
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) { reply(res, 413, { error: { message: "body too large" } }); req.destroy(); return; }
    chunks.push(c);
  });
  req.on("end", () => {
    if (size > MAX_BODY) return;
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")); } catch (e) {
      reply(res, 400, { error: { message: `bad json: ${e.message}` } });
      return;
    }
    queue = queue.then(() => complete(body)).then(
      (out) => reply(res, 200, out),
      (err) => reply(res, 400, { error: { message: String(err?.message ?? err) } }),
    );
  });
});
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
