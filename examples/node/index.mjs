// polyweave-tool-adapter: @polyweave/tool-adapter's API (1.0.5) over the polyweave C library,
// compiled to WebAssembly. This module only gathers the package's entry points; each job has
// its module: raw.mjs (frames as exact JSON text), adapter_call.mjs (`wrapToolAdapter`),
// wrapper.mjs (`createToolAdapterWrapper`), decode.mjs (stream decoders, item encoders),
// request.mjs (the conversation and the next request body),
// duplex.mjs (the stream shapes), binding.mjs (the C ABI: calls, structs, callbacks, `init`),
// wasm.mjs (loading, traps), memory.mjs (the linear memory), abi.mjs (generated from the header).
export { init, isLoaded, version } from './binding.mjs';
export { createSource, createSink, createDuplex, isDuplex } from './duplex.mjs';
export { RawJSON, raw, rawText } from './raw.mjs';
export { wrapToolAdapter } from './adapter_call.mjs';
export { createToolAdapterWrapper, validate, checkSchema } from './wrapper.mjs';
export {
  createDecoder,
  DecoderStream,
  DecoderTransform,
  encodeItem,
  framesFromResponse,
  Provider,
  providerFromName,
} from './decode.mjs';
export { createConversation, geminiPath } from './request.mjs';
