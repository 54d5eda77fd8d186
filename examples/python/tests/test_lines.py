"""`LineSplitter`: exact lines from a stream cut anywhere, over `pw_line_splitter`."""

import unittest

import support  # noqa: E402,F401 (first: it decides which package the imports below find)
import polyweave_tool_adapter as pw  # noqa: E402

STREAM = b'{"a":1}\n\n{"b":2}\r\n{"c":3}'


class LineSplitterTests(unittest.TestCase):
    def test_lines_whole_and_cut_anywhere_are_the_same(self):
        with pw.LineSplitter(16) as s:
            self.assertEqual(s.feed(STREAM), [b'{"a":1}', b'{"b":2}'])
            self.assertEqual(s.finish(), [b'{"c":3}'])
            self.assertEqual(s.finish(), [])
        for cut in range(len(STREAM) + 1):
            with pw.LineSplitter(16) as s:
                got = s.feed(STREAM[:cut]) + s.feed(STREAM[cut:]) + s.finish()
                self.assertEqual(got, [b'{"a":1}', b'{"b":2}', b'{"c":3}'], cut)

    def test_a_line_too_long_is_dropped_and_counted(self):
        with pw.LineSplitter(4) as s:
            self.assertEqual(s.feed("abcdef\nxy\n"), [b"xy"])
            self.assertEqual(s.too_long, 1)
            self.assertEqual(s.feed(b"123456789"), [])
            self.assertEqual(s.finish(), [])
            self.assertEqual(s.too_long, 2)
            # The next stream starts clean.
            self.assertEqual(s.feed(b"ok\n"), [b"ok"])

    def test_closed_and_bad_arguments(self):
        s = pw.LineSplitter()
        self.assertEqual(repr(s), "LineSplitter(line_cap=65536)")
        s.close()
        self.assertTrue(s.closed)
        with self.assertRaises(ValueError):
            s.feed(b"x\n")
        with self.assertRaises(TypeError):
            pw.LineSplitter(0)


if __name__ == "__main__":
    unittest.main()
