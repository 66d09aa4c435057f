/**
 * Elements nested deeper than this are flattened before a page is turned
 * into text: their tags are dropped, their text is kept, in order.
 *
 * Why a cap at all: htmlparser2 (under html-to-text) keeps its stack of open
 * elements with `Array.unshift`/`shift`, so every tag costs as much as the
 * depth it is at, and a page of nested `<div>`s costs the square of its size:
 * 1.5 MB of them held a hosting server's thread 23-25 s, 1M of them 461 s.
 * Real pages nest a few dozen levels; 256 leaves room for generated ones
 * and keeps html-to-text's recursion far from the stack limit (it overflowed
 * at about 2,000 levels). A module of its own so that web_fetch names it
 * without loading the HTML parser on the main thread.
 */
export const MAX_HTML_DEPTH = 256;
