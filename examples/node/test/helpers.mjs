// Test helpers: a fake LLM duplex recording what the wrapper wrote to it, and a consumer.
import { createDuplex } from '../duplex.mjs';

export function llm() {
  const toModel = [];
  const d = createDuplex({ onWrite: (f) => toModel.push(f) });
  return { duplex: d, toModel, say: (f) => d.source.push(f) };
}

export function consumer(wrapper) {
  const got = [];
  wrapper.source.pipe({ write: (f) => got.push(f), end: () => got.push('<end>') });
  return got;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const types = (frames) => frames.map((f) => (typeof f === 'string' ? f : f.type));
