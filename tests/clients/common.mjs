// Shared by the client scripts: argument handling, error descriptions and the JSON output.

// What a failed call tells its user: the HTTP status and the server's message when there was
// an HTTP error, else the SDK's own error (a validation failure of a response, say).
export function describeError(error) {
  const seen = error?.lastError ?? error;
  const out = {
    name: seen?.name ?? typeof seen,
    message: String(seen?.message ?? seen),
  };
  const status = seen?.statusCode ?? seen?.status;
  if (status !== undefined) {
    out.status = status;
  }
  const body = seen?.responseBody ?? seen?.error;
  if (body !== undefined) {
    out.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  if (seen?.cause !== undefined) {
    out.cause = String(seen.cause?.message ?? seen.cause);
  }
  return out;
}

// `node <script> <server url> <case>`: runs the case and prints its result as one JSON line.
export async function main(cases) {
  const [url, name] = process.argv.slice(2);
  const run = cases[name];
  if (!url || !run) {
    console.error(`usage: node <script> <server url> <case>; cases: ${Object.keys(cases)}`);
    process.exit(2);
  }
  let result;
  try {
    result = await run(url);
  } catch (error) {
    result = { error: describeError(error) };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
