import test from 'ava';
import { convertToFunctionResponse, createCancelledResponse, createErrorResponse, startsWithLeadResponse } from '../../src/scheduler/function-response.js';

test('a string becomes one functionResponse with output', (t) => {
  t.deepEqual(convertToFunctionResponse('read_file', 'c1', 'hello'), [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'hello' } } }]);
});

test('a one-element list holding a string is treated as the string', (t) => {
  t.deepEqual(convertToFunctionResponse('t', 'c1', ['hello']), [{ functionResponse: { id: 'c1', name: 't', response: { output: 'hello' } } }]);
});

test('a text part becomes the output', (t) => {
  t.deepEqual(convertToFunctionResponse('t', 'c1', { text: 'hi' }), [{ functionResponse: { id: 'c1', name: 't', response: { output: 'hi' } } }]);
});

test('multi-part content: a success functionResponse first, then the parts (strings become text parts)', (t) => {
  const image = { inlineData: { mimeType: 'image/png', data: 'AAAA' } };
  t.deepEqual(convertToFunctionResponse('t', 'c1', ['caption', image]), [
    { functionResponse: { id: 'c1', name: 't', response: { output: 'Tool execution succeeded.' } } },
    { text: 'caption' },
    image,
  ]);
});

test('an existing functionResponse passes through with this call id and name', (t) => {
  const existing = { functionResponse: { id: 'other', name: 'other', response: { custom: 1 } } };
  t.deepEqual(convertToFunctionResponse('t', 'c1', existing), [{ functionResponse: { id: 'c1', name: 't', response: { custom: 1 } } }]);
});

test('a binary part is announced by mime type, then passed along', (t) => {
  const pdf = { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } };
  const parts = convertToFunctionResponse('read_file', 'c1', pdf);
  t.deepEqual(parts[0], { functionResponse: { id: 'c1', name: 'read_file', response: { output: 'Binary content of type application/pdf was processed.' } } });
  t.is(parts[1], pdf);
});

test('error and cancelled responses carry the message (and partial output)', (t) => {
  const request = { callId: 'c1', name: 't', args: {} };
  t.deepEqual(createErrorResponse(request, { type: 'file_not_found', message: 'no such file' }).responseParts, [
    { functionResponse: { id: 'c1', name: 't', response: { error: 'no such file', errorType: 'file_not_found' } } },
  ]);
  t.deepEqual(createCancelledResponse(request, 'User cancelled.', 'half').responseParts, [
    { functionResponse: { id: 'c1', name: 't', response: { error: '[Operation Cancelled] User cancelled.', errorType: 'cancelled', output: 'half' } } },
  ]);
});

test('an error response can keep what the tool told the model beyond the message', (t) => {
  const request = { callId: 'c1', name: 't', args: {} };
  t.deepEqual(createErrorResponse(request, { type: 'discovered_tool_execution_error', message: 'exit 7' }, 'Stdout: x\nStderr: y').responseParts, [
    { functionResponse: { id: 'c1', name: 't', response: { error: 'exit 7', errorType: 'discovered_tool_execution_error', output: 'Stdout: x\nStderr: y' } } },
  ]);
});

test('the lead functionResponse of a list or media part is recognised; a tool output that says the same words alone is not', (t) => {
  t.true(startsWithLeadResponse(convertToFunctionResponse('t', 'c1', [{ text: 'a' }, { text: 'b' }])));
  t.true(startsWithLeadResponse(convertToFunctionResponse('t', 'c1', { inlineData: { mimeType: 'image/png', data: 'AA==' } })));
  t.false(startsWithLeadResponse(convertToFunctionResponse('t', 'c1', 'Tool execution succeeded.')));
  t.false(startsWithLeadResponse(convertToFunctionResponse('t', 'c1', 'plain')));
  t.false(startsWithLeadResponse([{ functionResponse: { id: 'c1', name: 't', response: { output: 'Tool execution succeeded.', extra: 1 } } }, { text: 'x' }]));
});
