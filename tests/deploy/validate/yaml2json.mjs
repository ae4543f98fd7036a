// yaml2json.mjs FILE — prints the YAML documents of FILE as one JSON array (for
// deploy_test.py, which has no YAML parser of its own).
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const docs = parseAllDocuments(readFileSync(process.argv[2], "utf8"));
for (const d of docs) {
  if (d.errors.length) {
    console.error(`${process.argv[2]}: ${d.errors[0].message}`);
    process.exit(1);
  }
}
console.log(JSON.stringify(docs.map((d) => d.toJS()).filter((o) => o != null)));
