// Every function of the JavaScript modules named on the command line, with its first and
// last line, as JSON: {file: [{name, start, end}]}. Parsed by acorn (ECMAScript modules,
// the latest syntax), so braces in strings, templates, regular expressions and comments
// never confuse it. Used by tests/test_architecture.py; argv[2] is acorn's folder.
"use strict";

const fs = require("fs");
const acorn = require(process.argv[2]);

/** The name a function is known by: its own, or the variable, property or method holding it. */
function holderName(parent, key) {
  if (parent.type === "VariableDeclarator" && key === "init") return parent.id.name;
  if ((parent.type === "MethodDefinition" || parent.type === "Property") && key === "value") {
    return parent.key.name || String(parent.key.value);
  }
  return undefined;
}

function functionsOf(source) {
  const tree = acorn.parse(source, { ecmaVersion: "latest", sourceType: "module", locations: true });
  const found = [];
  const visit = (node, name) => {
    if (node.type.endsWith("FunctionDeclaration") || node.type.endsWith("FunctionExpression")) {
      const own = node.id ? node.id.name : name;
      found.push({ name: own || "(anonymous)", start: node.loc.start.line, end: node.loc.end.line });
    }
    for (const [key, value] of Object.entries(node)) {
      const children = Array.isArray(value) ? value : [value];
      for (const child of children) {
        if (child && typeof child.type === "string") visit(child, holderName(node, key));
      }
    }
  };
  visit(tree, undefined);
  return found;
}

const result = {};
for (const file of process.argv.slice(3)) result[file] = functionsOf(fs.readFileSync(file, "utf8"));
process.stdout.write(JSON.stringify(result));
