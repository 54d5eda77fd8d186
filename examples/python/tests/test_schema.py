"""JSON Schema validation (SPEC §11) through the binding: `validate`, `check_schema`,
`SchemaError`, and tools registered with a schema (run: python3 -m unittest discover -s
examples/python/tests)."""

import unittest

import support  # noqa: F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402

WEATHER = {
    "type": "object",
    "required": ["city"],
    "additionalProperties": False,
    "properties": {"city": {"type": "string", "minLength": 1}, "days": {"type": "integer", "minimum": 1}},
}


def call(id, name, args):
    return ('{"type":"TOOL_CALL","content":{"id":"%s","name":"%s","args":%s}}' % (id, name, args)).encode()


class Validate(unittest.TestCase):
    def test_a_value_that_satisfies_the_schema_is_none(self):
        self.assertIsNone(pw.validate(WEATHER, '{"city":"Paris","days":2.0}'))
        self.assertIsNone(pw.validate(b'{"type":"integer"}', b" 3 "))
        self.assertIsNone(pw.validate(True, "null"))

    def test_a_value_that_does_not_is_the_text_the_model_gets(self):
        cases = [
            ('{"city":7}', "/city: expected string"),
            ("{}", '(args): missing required property "city"'),
            ('{"city":""}', "/city: must be at least 1 character long"),
            ('{"city":"P","days":0}', "/days: must be >= 1"),
            ('{"city":"P","days":1.5}', "/days: expected integer"),
            ('{"city":"P","caf\u00e9":1}', "/caf\u00e9: property not allowed"),
            ("[]", "(args): expected object"),
        ]
        for value, text in cases:
            self.assertEqual(pw.validate(WEATHER, value), text, value)
        self.assertEqual(pw.validate(False, "1"), "(args): no value is allowed here")

    def test_a_limit_of_the_validator_refuses_the_value_too(self):
        self.assertEqual(pw.validate(True, "[" * 40 + "]" * 40), "(args): too deeply nested to check")

    def test_a_schema_the_validator_refuses_raises_with_why_and_where(self):
        with self.assertRaises(pw.SchemaError) as e:
            pw.validate('{"$ref":"https://example.com/s.json"}', "1")
        self.assertEqual((e.exception.code, e.exception.kind, e.exception.offset), (700, pw.SchemaErrorKind.REMOTE_REF, 8))
        self.assertIsInstance(e.exception, ValueError)
        self.assertEqual(str(e.exception), "schema: not one the validator reads whole (code 700)")
        for schema, kind, offset in [
            ('{"type":', pw.SchemaErrorKind.NOT_JSON, 8),
            ("", pw.SchemaErrorKind.NOT_JSON, 0),
            ("1", pw.SchemaErrorKind.NOT_A_SCHEMA, 0),
            ('{"minimum":"1"}', pw.SchemaErrorKind.BAD_KEYWORD, 11),
            ('{"$ref":"#/$defs/nowhere"}', pw.SchemaErrorKind.UNRESOLVED_REF, 8),
            ('{"$defs":{"a":{"$anchor":"n"},"b":{"$anchor":"n"}},"$ref":"#n"}', pw.SchemaErrorKind.AMBIGUOUS_REF, 58),
            ('{"pattern":"(a"}', pw.SchemaErrorKind.BAD_PATTERN, 11),
            ('{"type":"string","type":"integer"}', pw.SchemaErrorKind.REPEATED_NAME, 24),
            (
                '{"properties":{' + ",".join(f'"p{i}":{{}}' for i in range(1000)) + "}}",
                pw.SchemaErrorKind.TOO_COSTLY,
                4442,
            ),
        ]:
            with self.assertRaises(pw.SchemaError) as e:
                pw.check_schema(schema)
            self.assertEqual((e.exception.kind, e.exception.offset), (kind, offset), schema)
        self.assertIsNone(pw.check_schema(WEATHER))

    def test_a_value_that_is_not_json_raises(self):
        with self.assertRaises(pw.InvalidJson):
            pw.validate(WEATHER, '{"city":')


class ToolsWithSchemas(unittest.TestCase):
    def test_invalid_args_never_reach_the_tool(self):
        ran = []
        tools = {
            "weather": pw.sync(lambda args: ran.append(args) or args, schema=WEATHER),
            "later": pw.deferred(schema='{"properties":{"q":{"type":"integer"}}}'),
        }
        w = pw.Wrapper(tools, slots=2)
        # Each schema is indexed (SPEC §11): the words pw_schema_index_words gives, written by
        # the library. WEATHER: 3 subschemas; the root's 4 keywords, 2 properties and 1
        # required name, then city's 2 keywords and days' 2
        # (1 + 2*3 + (2+4*3+2*4+2) + (2+2*3) + (2+2*3)); later's:
        # 2 subschemas, the root's 1 keyword and 1 property, q's 1 (1 + 2*2 + (2+3+4) + (2+3)).
        self.assertEqual([t.schema_index_words for t in w._tools], [47, 19])
        self.assertEqual(w._tools[0].schema_index[0], 3)
        w.handle_response(0, call("a", "weather", '{"city":7}'))
        self.assertEqual(
            [t.frame for t in w.transmits()][0],
            b'{"type":"TOOL_RESULT","content":{"id":"a","name":"weather",'
            b'"error":"Tool weather arguments are invalid: /city: expected string"}}',
        )
        w.handle_response(1, call("b", "later", '{"q":"x"}'))
        self.assertIsNone(w.poll_event())
        self.assertEqual(
            [t.frame for t in w.transmits()][0],
            b'{"type":"TOOL_RESULT","content":{"id":"b","name":"later",'
            b'"error":"Tool later arguments are invalid: /q: expected integer"}}',
        )
        self.assertEqual(ran, [])
        w.handle_response(2, call("c", "weather", '{"city":"Paris"}'))
        self.assertEqual(
            [t.frame for t in w.transmits()][0],
            b'{"type":"TOOL_RESULT","content":{"id":"c","name":"weather","result":{"city":"Paris"}}}',
        )
        self.assertEqual(ran, [b'{"city":"Paris"}'])
        w.close()

    def test_a_refused_schema_names_its_tool_and_places_nothing(self):
        with self.assertRaises(pw.SchemaError) as e:
            pw.Wrapper({"ok": pw.deferred(schema=WEATHER), "files": pw.adapter(schema={"minimum": "1"})})
        self.assertEqual((e.exception.tool, e.exception.kind, e.exception.offset), ("files", pw.SchemaErrorKind.BAD_KEYWORD, 11))

    def test_a_dict_is_written_once_as_json(self):
        self.assertEqual(pw.sync(lambda a: a, schema={"type": "object"}).schema, b'{"type":"object"}')
        self.assertIsNone(pw.deferred().schema)


if __name__ == "__main__":
    unittest.main()
