// Colour (issue 19): on a terminal only, never with NO_COLOR, never when piped.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { colourEnabled, painter } from "../../src/cli/lib/colour.js";
import { sourceSnippet } from "../../src/cli/lib/source-snippet.js";

test("colour only on a terminal without NO_COLOR", () => {
  assert.ok(colourEnabled({ isTTY: true }, {}));
  assert.not.ok(colourEnabled({ isTTY: true }, { NO_COLOR: "1" }));
  assert.not.ok(colourEnabled({ isTTY: false }, {}));
  assert.not.ok(colourEnabled({}, {}));
  assert.ok(colourEnabled({ isTTY: false }, { FORCE_COLOR: "1" }));
});

test("a painter without colour returns the text unchanged; with colour it styles it", () => {
  assert.is(painter(false)("red", "x"), "x");
  assert.match(painter(true)("red", "x"), "\u001b[31mx");
});

test("the caret lines up under the column, tabs included", () => {
  const plain = painter(false);
  assert.equal(sourceSnippet("a: 1\n\tb: zz\n", 2, 5, plain), ["  2 | \tb: zz", "    | \t   ^"]);
  assert.equal(sourceSnippet("a: 1\n", 9, 1, plain), [], "a line past the end shows nothing");
});

test.run();
