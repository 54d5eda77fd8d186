"""Random schemas of SPEC §11's keywords, for `differential.py --generate N`: schemas no tool
has, with the combinations real ones rarely show (keywords nested in combinators, `$defs`
reached by pointer and by `$anchor`, names given twice, draft-07's spellings, properties named
like keywords), so that the validator is compared with the reference beyond the real schemas
and the Test Suite.

Every `$ref` stands where the value is descended into (under `properties`, `items`, …), never
where the same value is checked again (`allOf`, `not`, `if`, the root): a chain of refs then
always ends with the value, in both validators.
"""

TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"]
# ECMA-262 patterns Python's `re` reads the same way (no `$` before a newline: the values
# generated hold none).
PATTERNS = ["^a", "b$", "[0-9]", "^[a-cé]*$", "x|y", "^.{2,3}$", "中", "^[^a]", "a+b?", "(ab)+",
            "^$", "😀", "^[A-Z]"]
SMALL = [0, 1, -1, 2.5, 1.0, 10**20, "a", "é", "", "A", True, False, None, [], {}, [1, "a"],
         {"a": 1}, {"b": [None]}]
NAMES = ["a", "b", "c", "é", "type", "$ref"]
ANCHORS = ["n", "m"]
DRAFT7 = "http://json-schema.org/draft-07/schema#"

COMMON = ["type", "type", "enum", "const", "properties", "properties", "required",
          "additionalProperties", "patternProperties", "propertyNames", "minProperties",
          "maxProperties", "items", "contains", "minItems", "maxItems", "uniqueItems",
          "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
          "exclusiveMaximum", "multipleOf", "allOf", "anyOf", "oneOf", "not", "if", "then",
          "else", "$ref", "$ref", "format", "description"]
ONLY_2020 = ["prefixItems", "dependentRequired", "minContains", "maxContains"]
ONLY_7 = ["additionalItems"]


class Maker:
    """One schema's making, from one seeded random source."""

    def __init__(self, rng, draft7):
        self.rng = rng
        self.draft7 = draft7
        self.keywords = COMMON + (ONLY_7 if draft7 else ONLY_2020)
        self.defs = []
        self.anchors = []

    def root(self):
        rng = self.rng
        out = {}
        if self.draft7:
            out["$schema"] = DRAFT7
        holder = "definitions" if self.draft7 else "$defs"
        names = [f"d{i}" for i in range(rng.randint(0, 3))]
        self.defs = [f"#/{holder}/{n}" for n in names]
        # Anchors are chosen first so that a ref made before its anchor's schema can name it.
        wanted = {n: rng.choice(ANCHORS) for n in names if rng.random() < 0.5}
        self.anchors = sorted(set(wanted.values()))
        defs = {}
        for n in names:
            d = self.schema(2, descended=False)
            if n in wanted:
                if not isinstance(d, dict):
                    d = {} if d else {"not": {}}
                d = {("$id" if self.draft7 else "$anchor"): ("#" if self.draft7 else "") + wanted[n],
                     **d}
            defs[n] = d
        body = self.schema(3, descended=False)
        if isinstance(body, dict):
            out.update(body)
        elif not out and not defs:
            return body
        else:
            out["allOf"] = [body]
        if defs:
            out[holder] = defs
        return out

    def schema(self, depth, descended):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.1:
            return rng.choice([True, False, {}, {"type": rng.choice(TYPES)}])
        out = {}
        for _ in range(rng.randint(1, 4)):
            kw = rng.choice(self.keywords)
            if kw == "$ref" and not descended:
                continue
            out[kw] = self.value(kw, depth, descended)
        return out

    def value(self, kw, depth, descended):
        rng = self.rng
        sub = lambda: self.schema(depth - 1, descended)  # noqa: E731 (checked in place)
        down = lambda: self.schema(depth - 1, True)  # noqa: E731 (a value inside this one)
        count = lambda: rng.randint(0, 3)  # noqa: E731
        if kw == "type":
            return rng.choice(TYPES) if rng.random() < 0.7 else rng.sample(TYPES, rng.randint(1, 3))
        if kw == "enum":
            return rng.sample(SMALL, rng.randint(1, 4))
        if kw == "const":
            return rng.choice(SMALL)
        if kw == "properties":
            return {n: down() for n in rng.sample(NAMES, rng.randint(1, 3))}
        if kw == "required":
            return rng.sample(NAMES[:4], rng.randint(0, 3))
        if kw in ("additionalProperties", "additionalItems", "contains", "items"):
            if kw == "items" and self.draft7 and rng.random() < 0.3:
                return [down() for _ in range(rng.randint(1, 3))]
            return rng.choice([True, False]) if rng.random() < 0.3 else down()
        if kw == "patternProperties":
            return {p: down() for p in rng.sample(PATTERNS, rng.randint(1, 2))}
        if kw == "propertyNames":
            return rng.choice([{"maxLength": 1}, {"pattern": rng.choice(PATTERNS)},
                               {"enum": ["a", "b"]}, False, self.schema(1, True)])
        if kw in ("minProperties", "maxProperties", "minItems", "maxItems", "minLength",
                  "maxLength", "minContains", "maxContains"):
            return count()
        if kw == "uniqueItems":
            return rng.random() < 0.7
        if kw == "pattern":
            return rng.choice(PATTERNS)
        if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            return rng.choice([0, 1, -1, 10, 2.5, -0.5, 100])
        if kw == "multipleOf":
            # A fractional step only of a power of two: the reference divides in floats, so
            # 10**20 against 1.5 is a multiple there (the quotient rounds to an integer), not here.
            return rng.choice([1, 2, 3, 0.5, 0.25])
        if kw in ("allOf", "anyOf", "oneOf"):
            return [sub() for _ in range(rng.randint(1, 3))]
        if kw in ("not", "if", "then", "else"):
            return sub()
        if kw == "prefixItems":
            return [down() for _ in range(rng.randint(1, 3))]
        if kw == "dependentRequired":
            return {rng.choice(NAMES[:3]): rng.sample(NAMES[:3], rng.randint(0, 2))}
        if kw == "$ref":
            targets = ["#"] + self.defs + [f"#{a}" for a in self.anchors]
            return rng.choice(targets)
        if kw == "format":
            return rng.choice(["email", "date-time", "uri"])
        return "a " + kw


def random_schema(rng):
    """One random schema: draft 2020-12, or draft-07 one time in four."""
    return Maker(rng, draft7=rng.random() < 0.25).root()
