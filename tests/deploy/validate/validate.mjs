// validate.mjs — validates every object of rendered Kubernetes manifests (multi-document
// YAML files) against the Kubernetes OpenAPI schemas of kubernetes-models and the
// Prometheus Operator CRD schemas, offline: types, required fields, enums, formats. An
// apiVersion/kind without a schema is an error. (Unknown field names are not caught by
// these schemas; deploy_test.py asserts the fields smcrypt relies on are present.)
//
// Usage: node validate.mjs FILE.yaml...   Exit 0 when every object is valid, else 1.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const failures = [];
let count = 0;

async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : [null, apiVersion];
  const pkg = group === "monitoring.coreos.com" ? "@kubernetes-models/prometheus-operator" : "kubernetes-models";
  const path = group ? `${pkg}/${group}/${version}/${kind}` : `${pkg}/${version}/${kind}`;
  try {
    const mod = await import(path);
    return mod[kind];
  } catch (e) {
    return null;
  }
}

for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const doc of docs) {
    if (doc.errors.length) {
      failures.push(`${file}: YAML error: ${doc.errors[0].message}`);
      continue;
    }
    const obj = doc.toJS();
    if (obj == null) continue;
    const where = `${file}: ${obj.kind}/${obj.metadata?.name}`;
    if (!obj.apiVersion || !obj.kind) {
      failures.push(`${where}: no apiVersion/kind`);
      continue;
    }
    const Model = await modelFor(obj.apiVersion, obj.kind);
    if (!Model) {
      failures.push(`${where}: no schema for ${obj.apiVersion} ${obj.kind}`);
      continue;
    }
    count++;
    try {
      new Model(obj).validate();
    } catch (e) {
      failures.push(`${where}: ${e.message}`);
    }
  }
}
for (const f of failures) console.log("FAIL:", f);
console.log(`${count} objects validated, ${failures.length} failures`);
process.exit(failures.length ? 1 : 0);
