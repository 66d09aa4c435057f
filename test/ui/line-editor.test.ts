import test from 'ava';
import type { Key } from '../../src/ui/chat/keyboard.js';
import { LineEditor } from '../../src/ui/chat/line-editor.js';

const type = (editor: LineEditor, text: string) => {
  for (const char of text) editor.handle({ sequence: char, name: char, ctrl: false, meta: false, shift: false });
};
const key = (name: string, ctrl = false): Key => ({ name, sequence: '', ctrl, meta: false, shift: false });

test('typing, moving and deleting', (t) => {
  const editor = new LineEditor();
  type(editor, 'helo');
  editor.handle(key('left'));
  type(editor, 'l');
  t.is(editor.text, 'hello');
  t.is(editor.cursor, 4);
  editor.handle(key('end'));
  editor.handle(key('backspace'));
  t.is(editor.text, 'hell');
  editor.handle(key('a', true));
  editor.handle(key('delete'));
  t.is(editor.text, 'ell');
  type(editor, 'w');
  editor.handle(key('e', true));
  type(editor, ' world');
  editor.handle(key('w', true));
  t.is(editor.text, 'well ');
  editor.handle(key('u', true));
  t.is(editor.text, '');
});

test('Enter submits, Ctrl+C interrupts, Ctrl+D on an empty line is end of input', (t) => {
  const editor = new LineEditor();
  t.is(editor.handle(key('d', true)), 'eof');
  type(editor, 'x');
  t.is(editor.handle(key('d', true)), 'ignored');
  t.is(editor.handle(key('c', true)), 'interrupt');
  t.is(editor.handle(key('return')), 'submit');
  t.is(editor.take(), 'x');
  t.is(editor.text, '');
});

test('up and down walk the history and come back to the draft', (t) => {
  const editor = new LineEditor();
  type(editor, 'one');
  editor.take();
  type(editor, 'two');
  editor.take();
  type(editor, 'dra');
  editor.handle(key('up'));
  t.is(editor.text, 'two');
  editor.handle(key('up'));
  t.is(editor.text, 'one');
  t.is(editor.handle(key('up')), 'ignored');
  editor.handle(key('down'));
  editor.handle(key('down'));
  t.is(editor.text, 'dra');
});

test('control characters are not typed', (t) => {
  const editor = new LineEditor();
  t.is(editor.handle({ sequence: '\x1b[15~', name: 'f5', ctrl: false, meta: false, shift: false }), 'ignored');
  t.is(editor.text, '');
});
