// SPEC §11 through the npm package: `validate`, and tools registered with a schema ({ fn, schema },
// { adapter, schema }), every text exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolAdapterWrapper, raw, validate } from '../index.mjs';
import { C, ENUMS, heapStats } from '../binding.mjs';
import { llm } from './helpers.mjs';

const WEATHER = {
  type: 'object',
  required: ['city'],
  additionalProperties: false,
  properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1 } },
};
const call = (name, args, id) => ({ type: 'TOOL_CALL', content: { id, name, args } });
const invalid = (id, name, why) => ({
  type: 'TOOL_RESULT',
  content: { id, name, error: `Tool ${name} arguments are invalid: ${why}` },
});
const lastError = (name, why) => ({
  type: 'TEXT',
  content: `Tool results above. Last tool error: Tool ${name} arguments are invalid: ${why}`,
});

test('validate: null for a value that satisfies the schema, else the text the model gets', () => {
  assert.equal(validate(WEATHER, { city: 'Paris', days: 2 }), null);
  assert.equal(validate(JSON.stringify(WEATHER), raw('{"city":"Paris","days":2.0}')), null);
  assert.equal(validate(true, null), null);
  const cases = [
    [{ city: 7 }, '/city: expected string'],
    [{}, '(args): missing required property "city"'],
    [{ city: '' }, '/city: must be at least 1 character long'],
    [{ city: 'P', days: 0 }, '/days: must be >= 1'],
    [raw('{"city":"P","days":1.5}'), '/days: expected integer'],
    [{ city: 'P', 'caf\u00e9': 1 }, '/caf\u00e9: property not allowed'],
    [[], '(args): expected object'],
  ];
  for (const [value, text] of cases) assert.equal(validate(WEATHER, value), text, JSON.stringify(value));
  assert.equal(validate(false, 1), '(args): no value is allowed here');
  // A limit of the validator refuses the value too.
  assert.equal(validate(true, raw('['.repeat(40) + ']'.repeat(40))), '(args): too deeply nested to check');
});

test('validate: a schema the validator refuses throws PW_BAD_SCHEMA with why and where; a raw value not JSON, PW_INVALID_JSON', () => {
  const refused = [
    ['{"$ref":"https://example.com/s.json"}', 'PW_SCHEMA_ERROR_REMOTE_REF', 8],
    ['{"type":', 'PW_SCHEMA_ERROR_NOT_JSON', 8],
    ['', 'PW_SCHEMA_ERROR_NOT_JSON', 0],
    [1, 'PW_SCHEMA_ERROR_NOT_A_SCHEMA', 0],
    [{ minimum: '1' }, 'PW_SCHEMA_ERROR_BAD_KEYWORD', 11],
    ['{"$ref":"#/$defs/nowhere"}', 'PW_SCHEMA_ERROR_UNRESOLVED_REF', 8],
    ['{"$defs":{"a":{"$anchor":"n"},"b":{"$anchor":"n"}},"$ref":"#n"}', 'PW_SCHEMA_ERROR_AMBIGUOUS_REF', 58],
    [{ pattern: '(a' }, 'PW_SCHEMA_ERROR_BAD_PATTERN', 11],
    ['{"type":"string","type":"integer"}', 'PW_SCHEMA_ERROR_REPEATED_NAME', 24],
    [
      `{"properties":{${Array.from({ length: 1000 }, (_, i) => `"p${i}":{}`).join(',')}}}`,
      'PW_SCHEMA_ERROR_TOO_COSTLY',
      4442,
    ],
  ];
  for (const [schema, kind, offset] of refused) {
    assert.throws(
      () => validate(schema, 1),
      (e) => {
        assert.equal(e.code, 'PW_BAD_SCHEMA');
        assert.equal(e.errno, 700);
        assert.equal(e.kind, kind);
        assert.equal(e.offset, offset);
        assert.equal(
          e.message,
          `validate: the schema is refused at byte ${offset} (${kind}): schema: not one the validator reads whole (PW_BAD_SCHEMA, 700)`,
        );
        return true;
      },
      String(schema),
    );
  }
  assert.throws(() => validate(WEATHER, raw('{"city":')), { code: 'PW_INVALID_JSON', errno: 103 });
});

test('a tool with a schema never sees args that do not satisfy it; the call completes with the text', async () => {
  const m = llm();
  const ran = [];
  createToolAdapterWrapper(m.duplex, {
    tools: {
      weather: { fn: (args) => (ran.push(args), { ok: args.city }), schema: WEATHER },
      later: { fn: async (args) => ({ q: args.q }), schema: '{"properties":{"q":{"type":"integer"}}}' },
    },
  });
  m.say(call('weather', { city: 7 }, 'a'));
  m.say(call('later', { q: 'x' }, 'b'));
  m.say(call('weather', { city: 'Paris' }, 'c'));
  m.say(call('later', { q: 3 }, 'd'));
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(ran, [{ city: 'Paris' }]);
  assert.deepEqual(m.toModel, [
    invalid('a', 'weather', '/city: expected string'),
    lastError('weather', '/city: expected string'),
    invalid('b', 'later', '/q: expected integer'),
    lastError('later', '/q: expected integer'),
    { type: 'TOOL_RESULT', content: { id: 'c', name: 'weather', result: { ok: 'Paris' } } },
    { type: 'TEXT', content: 'Tool results above.' },
    { type: 'TOOL_RESULT', content: { id: 'd', name: 'later', result: { q: 3 } } },
    { type: 'TEXT', content: 'Tool results above.' },
  ]);
});

test('a refused tool schema names its tool, why and where, and builds nothing', () => {
  const m = llm();
  const before = heapStats();
  assert.throws(
    () =>
      createToolAdapterWrapper(m.duplex, {
        tools: { ok: { fn: () => 1, schema: WEATHER }, files: { adapter: () => null, schema: { minimum: '1' } } },
      }),
    (e) => {
      assert.deepEqual([e.code, e.kind, e.offset, e.tool], ['PW_BAD_SCHEMA', 'PW_SCHEMA_ERROR_BAD_KEYWORD', 11, 'files']);
      assert.equal(
        e.message,
        'createToolAdapterWrapper: the schema of tool "files" is refused at byte 11 (PW_SCHEMA_ERROR_BAD_KEYWORD): schema: not one the validator reads whole (PW_BAD_SCHEMA, 700)',
      );
      return true;
    },
  );
  assert.deepEqual(heapStats(), before, 'nothing kept in the module');
  assert.equal(validate(WEATHER, {}), '(args): missing required property "city"');
  assert.deepEqual(heapStats(), before, 'validate keeps nothing either');
  assert.throws(() => createToolAdapterWrapper(m.duplex, { tools: { f: { fn: 1, schema: true } } }), TypeError);
});

test('a tool schema is indexed: pw_schema_index_words sizes the words the library writes', () => {
  // WEATHER: 3 subschemas; the root's 4 keywords, 2 properties and 1 required name, city's 2
  // keywords, days' 2.
  const n = [0];
  assert.equal(C.schemaIndexWords(JSON.stringify(WEATHER), n), ENUMS.pw_result.PW_OK);
  assert.equal(n[0], 1 + 2 * 3 + (2 + 4 * 3 + 2 * 4 + 2) + (2 + 2 * 3) + (2 + 2 * 3));
  const bad = [7];
  assert.equal(C.schemaIndexWords('{"minimum":"1"}', bad), ENUMS.pw_result.PW_BAD_SCHEMA);
  assert.equal(bad[0], 0, 'nothing to size');
});
