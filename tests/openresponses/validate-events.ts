// Reads stream events and response objects (one JSON object a line) on stdin and prints, for
// each, the issues the Open Responses schema of its type finds ([] when it conforms; an event
// type the spec does not define is one issue). argv[2]: the spec's repository.
const root = process.argv[2];
const { streamingEventSchema } = await import(`${root}/src/lib/sse-parser.ts`);
const { responseResourceSchema } = await import(
  `${root}/src/generated/kubb/zod/responseResourceSchema.ts`
);

type Schema = {
  shape?: { type?: Schema };
  safeParse: (value: unknown) => {
    success: boolean;
    error?: { issues: { path: (string | number)[]; message: string }[] };
  };
};

function schemaOf(type: string | undefined): Schema | null {
  if (type === undefined) return responseResourceSchema;
  const events: Schema[] = streamingEventSchema.options;
  return events.find((event) => event.shape?.type?.safeParse(type).success) ?? null;
}

const text = await Bun.stdin.text();
for (const line of text.split("\n")) {
  if (!line.trim()) continue;
  const data = JSON.parse(line);
  const schema = schemaOf(data.type);
  let issues: string[] = ["not an event type of the spec"];
  if (schema !== null) {
    const result = schema.safeParse(data);
    issues = (result.error?.issues ?? []).map(
      (issue) => `${issue.path.join(".")}: ${issue.message}`,
    );
  }
  console.log(JSON.stringify({ type: data.type ?? "response", issues }));
}
