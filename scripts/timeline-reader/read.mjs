// Loads a trace-event JSON timeline with Chrome DevTools' own trace engine (the parser behind
// the Performance panel, published as @paulirish/trace_engine) and prints what it understood,
// one fact a line, for nicsim's tests to check:
//   thread <pid> <process name> <tid> <thread name> <slices>
//   flow <slices> <distinct processes> <distinct threads>
//   counter <pid> <name> <samples>
//   warning <text>
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine/models/trace/trace.js';

// the engine measures layout shifts with DOMRect, which Node lacks; nothing here uses it
globalThis.DOMRect ??= class {
  constructor(x = 0, y = 0, w = 0, h = 0) { Object.assign(this, {x, y, width: w, height: h}); }
};

const file = process.argv[2];
const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;

const processNames = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'process_name') processNames.set(e.pid, e.args.name);
for (const [pid, p] of data.Renderer.processes)
  for (const [tid, t] of p.threads)
    console.log(['thread', pid, processNames.get(pid) ?? '?', tid, t.name ?? '?', t.entries.length].join('\t'));
for (const flow of data.Flows.flows)
  console.log(['flow', flow.length, new Set(flow.map(e => e.pid)).size,
    new Set(flow.map(e => e.pid + '/' + e.tid)).size].join('\t'));
const counters = new Map();
for (const e of events) {
  if (e.ph !== 'C') continue;
  const k = e.pid + '\t' + e.name;
  counters.set(k, (counters.get(k) ?? 0) + 1);
}
for (const [k, n] of counters) console.log(['counter', k, n].join('\t'));
for (const [w, evs] of data.Warnings.perWarning) console.log(['warning', w, evs.length].join('\t'));
