"""The argument validator (SPEC §11) against Python `jsonschema` (4.26.0, the reference) on real
tool schemas: for each schema, values made to pass and values made to fail, both validators
asked, and any value on which their valid/invalid answers differ is a failure.

    python tests/schema/differential.py --replay target/debug/polyweave-replay \\
        [--seed N] [--values N] [--generate N] FILE...

FILE is NDJSON, one tool per line, its schema in `schema` (tests/data/mcp-tool-schemas.ndjson,
written by tests/schema/collect.py) or `input_schema` (tests/data/bfcl/functions.ndjson).
`--values` (default 200) is per schema and per side: that many values built to pass, and as many
built to fail (one mutation of a passing value: a required member dropped, a wrong type, a number
out of range, a value outside an enum, an extra member, a string or array of the wrong length,
…). What decides is the reference's answer, not how the value was built; each side's count is
the reference's. The values are written as JSON text with varied spellings (`3`, `3.0`, `3E0`;
escaped and raw characters; white space), the same text given to both. Ours is
`polyweave-replay --validate SCHEMA.json`, all of a schema's values on its stdin, one per line.

`--generate N` adds N random schemas of SPEC §11's keywords (tests/schema/generate.py: nested
combinators, `$defs` reached by pointer and by `$anchor`, names given twice, draft-07's
spellings), each with values built as above and as many of any shape.

The reference takes the draft the schema's `$schema` names, 2020-12 when it names none.
Everything is seeded (`--seed`, default 31): the same run gives the same values and counts.
Exit status 0 when every answer agreed and every schema got both answers among its values, 1
otherwise (each disagreement printed with its schema, value and both answers; at most `--show`, 50), 2
for bad arguments.
"""

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from urllib.parse import unquote

import jsonschema
from jsonschema.validators import validator_for

from generate import random_schema

REFERENCE = "4.26.0"
# Characters strings are made of: ASCII, Latin-1, a CJK character and one outside the BMP (two
# UTF-16 units, one code point: minLength/maxLength count code points).
ALPHABET = "abcxyzABC019 _-./:" + "é中😀"


class NoValue(Exception):
    """The schema has no value this generator can build (`false`, `not` at the root, …)."""


def resolve(root, ref):
    """The subschema a same-document `$ref` names (`#`, `#/a/b`), or None."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node = root
    pointer = ref[1:]
    if not pointer:
        return root
    if not pointer.startswith("/"):
        return None
    for token in pointer[1:].split("/"):
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return None
    return node


class Generator:
    """Values for one schema, from one seeded random source."""

    def __init__(self, root, rng):
        self.root = root
        self.rng = rng

    def deref(self, schema, depth=0):
        # Follow `$ref`s to the schema that says what the value is (refs to refs included).
        while isinstance(schema, dict) and "$ref" in schema and depth < 16:
            target = resolve(self.root, schema["$ref"])
            if target is None:
                return schema
            schema = target
            depth += 1
        return schema

    def types(self, schema):
        t = schema.get("type")
        if isinstance(t, str):
            return [t]
        if isinstance(t, list) and t:
            return t
        if "const" in schema or "enum" in schema:
            return []
        inferred = []
        if any(k in schema for k in ("properties", "required", "additionalProperties")):
            inferred.append("object")
        if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
            inferred.append("array")
        if any(k in schema for k in ("minLength", "maxLength", "pattern")):
            inferred.append("string")
        if any(k in schema for k in ("minimum", "maximum", "multipleOf")):
            inferred.append("number")
        return inferred or ["string", "integer", "number", "boolean", "null", "object", "array"]

    # ---- values made to pass -------------------------------------------------------------

    def valid(self, schema, depth=0):
        rng = self.rng
        schema = self.deref(schema)
        if schema is True or schema == {}:
            return self.anything(depth)
        if schema is False or not isinstance(schema, dict):
            raise NoValue
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            if not schema["enum"]:
                raise NoValue
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema and schema[key]:
                branch = rng.choice(schema[key])
                rest = {k: v for k, v in schema.items() if k != key}
                return self.valid({**rest, **branch} if isinstance(branch, dict) else branch, depth)
        if "allOf" in schema and schema["allOf"]:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(self.deref(part), dict):
                    merged.update(self.deref(part))
            return self.valid(merged, depth)
        kind = rng.choice(self.types(schema))
        return getattr(self, "valid_" + kind, self.valid_null)(schema, depth)

    def valid_object(self, schema, depth):
        rng = self.rng
        props = schema.get("properties", {}) if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        out = {}
        for name in required:
            out[name] = self.valid(props.get(name, True), depth + 1) if depth < 6 else None
        for name, sub in props.items():
            if name not in out and rng.random() < 0.5 and depth < 6:
                try:
                    out[name] = self.valid(sub, depth + 1)
                except NoValue:
                    pass
        extra = schema.get("additionalProperties", True)
        if extra is not False and rng.random() < 0.2 and depth < 6:
            name = self.string(1, 8)
            try:
                if name not in props and name not in out:
                    out[name] = self.valid(extra, depth + 1)
            except NoValue:
                pass
        keys = list(out)
        rng.shuffle(keys)
        return {k: out[k] for k in keys}

    def valid_array(self, schema, depth):
        lo = count(schema, "minItems", 0)
        hi = count(schema, "maxItems", lo + 4)
        n = self.rng.randint(lo, max(lo, hi)) if depth < 6 else lo
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        if isinstance(items, list):  # draft-07's tuple form
            prefix, items = items, schema.get("additionalItems", True)
        out = []
        for i in range(n):
            sub = prefix[i] if i < len(prefix) else items
            out.append(self.valid(sub, depth + 1))
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in out}) < len(out):
            raise NoValue
        return out

    def valid_string(self, schema, depth):
        lo = count(schema, "minLength", 0)
        hi = count(schema, "maxLength", lo + 12)
        return self.string(lo, max(lo, hi))

    def valid_integer(self, schema, depth):
        lo, hi = self.bounds(schema, integer=True)
        n = self.rng.randint(lo, hi)
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            n = (n // step) * step
            if n < lo:
                n += step
        return n

    def valid_number(self, schema, depth):
        if self.rng.random() < 0.5 or "multipleOf" in schema:
            return self.valid_integer(schema, depth)
        lo, hi = self.bounds(schema, integer=False)
        return round(self.rng.uniform(lo, hi), self.rng.randint(0, 4))

    def valid_boolean(self, schema, depth):
        return self.rng.random() < 0.5

    def valid_null(self, schema, depth):
        return None

    def bounds(self, schema, integer):
        lo, hi = -1000, 1000
        if isinstance(schema.get("minimum"), (int, float)):
            lo = schema["minimum"]
        if isinstance(schema.get("exclusiveMinimum"), (int, float)):
            lo = schema["exclusiveMinimum"] + 1
        if isinstance(schema.get("maximum"), (int, float)):
            hi = schema["maximum"]
        if isinstance(schema.get("exclusiveMaximum"), (int, float)):
            hi = schema["exclusiveMaximum"] - 1
        if "maximum" not in schema and "exclusiveMaximum" not in schema:
            hi = max(hi, lo + 1000)
        if "minimum" not in schema and "exclusiveMinimum" not in schema:
            lo = min(lo, hi - 1000)
        if integer:
            lo, hi = math.ceil(lo), math.floor(hi)
        if lo > hi:
            raise NoValue
        return lo, hi

    def string(self, lo, hi):
        n = self.rng.randint(lo, hi)
        return "".join(self.rng.choice(ALPHABET) for _ in range(n))

    def anything(self, depth):
        rng = self.rng
        kind = rng.choice(["string", "integer", "number", "boolean", "null"]
                          + (["object", "array"] if depth < 3 else []))
        if kind == "object":
            return {self.string(1, 6): self.anything(depth + 1) for _ in range(rng.randint(0, 3))}
        if kind == "array":
            return [self.anything(depth + 1) for _ in range(rng.randint(0, 3))]
        if kind == "string":
            return self.string(0, 8)
        if kind == "integer":
            return rng.randint(-10**6, 10**6)
        if kind == "number":
            return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
        return rng.choice([True, False, None])

    # ---- values made to fail -------------------------------------------------------------

    def spots(self, schema, value, path=()):
        """(path, schema, value) of every value in `value` with the schema it is checked by
        (through `properties` and `items`), the root first."""
        schema = self.deref(schema)
        out = [(path, schema, value)]
        if not isinstance(schema, dict):
            return out
        if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
            for k, v in value.items():
                if k in schema["properties"]:
                    out += self.spots(schema["properties"][k], v, path + (k,))
        if isinstance(value, list):
            prefix = schema.get("prefixItems", [])
            items = schema.get("items", True)
            if isinstance(items, list):
                prefix, items = items, schema.get("additionalItems", True)
            for i, v in enumerate(value):
                out += self.spots(prefix[i] if i < len(prefix) else items, v, path + (i,))
        return out

    def mutations(self, schema, value):
        """Ways to break `value` where `schema` checks it: each a function returning the
        replacement."""
        rng = self.rng
        out = []
        wrong = {
            "string": lambda: rng.choice([5, True, None, [], {}]),
            "integer": lambda: rng.choice(["7", 1.5, -0.25, True, None, [1]]),
            "number": lambda: rng.choice(["1", True, None, {}, [2]]),
            "boolean": lambda: rng.choice([0, 1, "true", None]),
            "null": lambda: rng.choice([0, False, "", "null"]),
            "object": lambda: rng.choice([[], "{}", 1, None, [{}]]),
            "array": lambda: rng.choice([{}, "[]", 0, None]),
        }
        for t in self.types(schema) if isinstance(schema, dict) and "type" in schema else []:
            if t in wrong:
                out.append(wrong[t])
        if not isinstance(schema, dict):
            return out
        if isinstance(value, dict):
            for name in schema.get("required", []):
                if name in value:
                    out.append(lambda name=name: {k: v for k, v in value.items() if k != name})
            extra = self.string(1, 6)
            if extra not in value:
                out.append(lambda: {**value, extra: self.anything(2)})
            if "properties" in schema and schema["properties"]:
                name = rng.choice(list(schema["properties"]))
                # A declared name with one character changed: close, but another member.
                out.append(lambda: {**value, name.upper() if name != name.upper() else name + "_": 1})
        if "enum" in schema or "const" in schema:
            allowed = schema.get("enum", [schema.get("const")])
            def near_miss():
                pick = rng.choice(allowed) if allowed else None
                if isinstance(pick, str):
                    return rng.choice([pick.upper(), pick + " ", pick[:-1], pick.swapcase()])
                if isinstance(pick, bool):
                    return int(pick)
                if isinstance(pick, (int, float)):
                    return pick + rng.choice([1, 0.5, -1])
                return self.anything(2)
            out.append(near_miss)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for key, delta in (("minimum", -1), ("exclusiveMinimum", 0), ("maximum", 1),
                               ("exclusiveMaximum", 0)):
                if isinstance(schema.get(key), (int, float)):
                    out.append(lambda key=key, delta=delta: schema[key] + delta)
            if "multipleOf" in schema:
                out.append(lambda: value + schema["multipleOf"] / 2)
            if "integer" in self.types(schema):
                out.append(lambda: value + 0.5)
        if isinstance(value, str):
            if count(schema, "minLength", 0) > 0:
                out.append(lambda: self.string(0, count(schema, "minLength", 0) - 1))
            if "maxLength" in schema:
                top = count(schema, "maxLength", 0)
                out.append(lambda: self.string(top + 1, top + 3))
            if "pattern" in schema:
                out.append(lambda: self.string(0, 6))
        if isinstance(value, list):
            if count(schema, "minItems", 0) > 0:
                out.append(lambda: value[: count(schema, "minItems", 0) - 1])
            if "maxItems" in schema:
                more = count(schema, "maxItems", 0) + 1 - len(value)
                out.append(lambda: value + [value[0] if value else 1] * more)
            # An item no schema of these tools takes: an object holding a null.
            out.append(lambda: value + [{"x": [None]}])
            if schema.get("uniqueItems") and value:
                out.append(lambda: value + [value[0]])
        return out

    def invalid(self, schema, value):
        spots = self.spots(schema, value)
        self.rng.shuffle(spots)
        for path, sub, here in spots:
            ways = self.mutations(sub, here)
            if ways:
                return put(value, path, self.rng.choice(ways)())
        # Nothing to break where a keyword checks: the root as another type.
        return self.rng.choice([[], "x", 0, None, {"unexpected": True}])


def count(schema, key, default):
    """A count keyword's value as an int (a schema may write `2.0`)."""
    return int(schema.get(key, default))


def put(value, path, new):
    """`value` with the member at `path` replaced by `new` (copies along the path)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: put(value[head], rest, new)}
    copy = list(value)
    copy[head] = put(copy[head], rest, new)
    return copy


# ---- JSON text with varied spellings --------------------------------------------------------

def write(value, rng):
    """`value` as one line of JSON text, with spellings a validator must read alike."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        # Past 2**53 Python reads `N.0` as the nearest double, not as N: only plain digits there.
        if abs(value) > 2**53:
            return str(value)
        return rng.choice([str(value)] * 4 + [f"{value}.0", f"{value}E0", f"{value}e+0"])
    if isinstance(value, float):
        return rng.choice([repr(value), repr(value).upper()]) if math.isfinite(value) else "0"
    if isinstance(value, str):
        return write_string(value, rng)
    sp = rng.choice(["", "", " ", "\t"])
    if isinstance(value, list):
        return "[" + sp + ("," + sp).join(write(v, rng) for v in value) + sp + "]"
    members = (write_string(k, rng) + sp + ":" + sp + write(v, rng) for k, v in value.items())
    return "{" + sp + ("," + sp).join(members) + sp + "}"


def write_string(text, rng):
    escape_some = rng.random() < 0.3
    out = ['"']
    for c in text:
        if c in '"\\' or ord(c) < 0x20:
            out.append(json.dumps(c)[1:-1])
        elif escape_some and rng.random() < 0.3:
            units = c.encode("utf-16-be")
            out.extend(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


# ---- the two validators ---------------------------------------------------------------------

def reference(schema):
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def ours(replay, schema, lines):
    """Our answers (True, False, or an error line's text) for `lines`, or the refusal text."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8", delete=False) as f:
        json.dump(schema, f, ensure_ascii=False)
        path = f.name
    try:
        run = subprocess.run([replay, "--validate", path], input="".join(l + "\n" for l in lines),
                             capture_output=True, text=True, encoding="utf-8")
    finally:
        Path(path).unlink()
    if run.returncode == 2:
        return run.stderr.strip()
    if run.returncode != 0:
        raise RuntimeError(f"polyweave-replay --validate: status {run.returncode}: {run.stderr}")
    answers = []
    for line in run.stdout.splitlines():
        answer = json.loads(line)
        if answer.get("limit"):
            answers.append("limit: " + answer["error"])
        else:
            answers.append((answer["valid"], answer.get("error")))
    if len(answers) != len(lines):
        raise RuntimeError(f"{len(lines)} values, {len(answers)} answers")
    return answers


# ---- the inputs ------------------------------------------------------------------------------

# Keywords the reference checks and SPEC §11 leaves out (ours ignores them): a suite schema using
# one is left out (a real tool's schema is checked whatever it holds).
BEYOND = {"unevaluatedProperties", "unevaluatedItems", "dependentSchemas", "dependencies",
          "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"}
# Refusals SPEC §11 allows at registration (texts of `SchemaError`).
REFUSALS = ("a $ref to another document", "a pattern using syntax the matcher does not read",
            "a $ref to a name the document gives twice")
DRAFT7 = "http://json-schema.org/draft-07/schema#"


def checks_beyond_spec(schema):
    """Whether `schema` holds, anywhere, a member named like a keyword of BEYOND."""
    if isinstance(schema, dict):
        return any(k in BEYOND or checks_beyond_spec(v) for k, v in schema.items())
    if isinstance(schema, list):
        return any(checks_beyond_spec(v) for v in schema)
    return False


def entries(file):
    """(label, schema, real) of each schema in `file`: NDJSON of tools (`schema` or
    `input_schema`: real tools' schemas), or a folder of the JSON Schema Test Suite
    (`draft2020-12/*.json`, `draft7/*.json`: each test group's schema, its draft the folder's)."""
    path = Path(file)
    if path.is_dir():
        for case in sorted(path.glob("*/*.json")):
            for group in json.loads(case.read_text(encoding="utf-8")):
                schema = group["schema"]
                if case.parent.name == "draft7" and isinstance(schema, dict) and "$schema" not in schema:
                    schema = {"$schema": DRAFT7, **schema}
                yield f"{case.parent.name}/{case.name}: {group['description']}", schema, False
        return
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        entry = json.loads(line)
        name = entry.get("tool", entry.get("name"))
        yield f"{file}:{n + 1} {name}", entry.get("schema", entry.get("input_schema")), True


def generated(n, seed):
    """(label, schema, real) of `n` random schemas (`--generate`)."""
    rng = random.Random(f"{seed}/generated")
    for i in range(n):
        yield f"generated #{i + 1}", random_schema(rng), False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replay", required=True, help="the polyweave-replay executable")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--values", type=int, default=200, help="per schema and side")
    parser.add_argument("--show", type=int, default=50, help="disagreements printed at most")
    parser.add_argument("--generate", type=int, default=0, help="random schemas to add")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if not args.files and not args.generate:
        parser.error("give a FILE or --generate N")
    if version("jsonschema") != REFERENCE:
        sys.exit(f"differential.py: the reference is jsonschema {REFERENCE}, "
                 f"this is {version('jsonschema')}")

    failures = disagreements = 0
    sources = [(file, entries(file)) for file in args.files]
    if args.generate:
        sources.append((f"{args.generate} generated schemas", generated(args.generate, args.seed)))
    for file, found in sources:
        schemas = values = valid = invalid = unbuildable = refused_by_reference = 0
        beyond = refused = limits = 0
        # Of the values built to pass, how many the reference finds valid; of those built to
        # fail, how many invalid: how well the generator aims (the answers decide, not this).
        aimed = {"pass": [0, 0], "fail": [0, 0]}
        for n, (name, schema, real) in enumerate(found):
            if not real and checks_beyond_spec(schema):
                beyond += 1
                continue
            rng = random.Random(f"{args.seed}/{file}/{n}")
            gen = Generator(schema, rng)
            built = []
            made = name.startswith("generated")
            for side in ("pass", "fail"):
                for _ in range(args.values):
                    try:
                        v = gen.valid(schema)
                        if side == "fail":
                            v = gen.invalid(schema, v)
                    except NoValue:
                        unbuildable += 1
                        continue
                    except (RecursionError, TypeError, ValueError, KeyError, AttributeError):
                        # The generator aims at real schemas' shapes; a random schema it cannot
                        # read gets values of any shape instead (below).
                        if not made:
                            raise
                        unbuildable += 1
                        continue
                    built.append((side, write(v, rng)))
            if made:
                built += [("any", write(gen.anything(0), rng)) for _ in range(args.values)]
            try:
                check = reference(schema)
            except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType) as e:
                # Nothing to compare with (Python's `re` reads no `\p{…}`, for one).
                refused_by_reference += 1
                print(f"SKIP {name}: jsonschema refuses the schema: {str(e).splitlines()[0]}")
                continue
            try:
                want = [check.is_valid(json.loads(text)) for _, text in built]
            except TypeError as e:
                # jsonschema 4.26.0 fails on some schemas it accepted (draft-07's
                # `additionalItems` beside a boolean `items`: `len(True)`): no answer to compare.
                if not made:
                    raise
                refused_by_reference += 1
                print(f"SKIP {name}: jsonschema fails: {e}")
                continue
            got = ours(args.replay, schema, [text for _, text in built])
            if isinstance(got, str):
                # SPEC §11 refuses a $ref to another document and a pattern beyond the matcher
                # at registration; the suite has both. A real tool's schema must be taken.
                if not real and any(why in got for why in REFUSALS):
                    refused += 1
                    continue
                failures += 1
                print(f"FAIL {name}: refused: {got}\n  schema {json.dumps(schema)}")
                continue
            schemas += 1
            for (side, _), w in zip(built, want):
                if side in aimed:
                    aimed[side][0] += 1
                    aimed[side][1] += w == (side == "pass")
            # A real schema whose values all got one answer checked nothing on the other side
            # (the suite has schemas that admit everything or nothing).
            if real and (all(want) or not any(want)):
                failures += 1
                print(f"FAIL {name}: every value built is "
                      f"{'valid' if want and want[0] else 'invalid'}: the generator reached one "
                      f"answer only\n  schema {json.dumps(schema)}")
            for (_, text), w, g in zip(built, want, got):
                if made and isinstance(g, str) and g.startswith("limit: "):
                    # A limit (depth, subschemas tried) refuses the value, as SPEC §11 says; a
                    # random schema's refs can reach one that no real schema does.
                    limits += 1
                    continue
                values += 1
                valid += w
                invalid += not w
                if isinstance(g, str) or g[0] != w:
                    failures += 1
                    disagreements += 1
                    if disagreements <= args.show:
                        print(f"FAIL {name}\n  schema {json.dumps(schema)}\n"
                              f"  value  {text}\n  jsonschema {'valid' if w else 'invalid'}, "
                              f"ours {g}")
        print(f"{file}: {schemas} schemas, {values} values ({valid} valid, {invalid} invalid by "
              f"jsonschema {REFERENCE}); built to pass: {aimed['pass'][1]} of {aimed['pass'][0]} "
              f"valid, built to fail: {aimed['fail'][1]} of {aimed['fail'][0]} invalid; "
              f"{unbuildable} not buildable; {refused_by_reference} schemas jsonschema refuses"
              + (f"; left out: {beyond} with keywords beyond SPEC §11, {refused} refused at "
                 f"registration, {limits} values refused on a limit" if not real else ""))
    print(f"disagreements: {disagreements}, failures in all: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
