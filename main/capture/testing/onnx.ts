/**
 * A minimal ONNX (protobuf) writer for test models, so tests need no Python or model download.
 * Field numbers from onnx/onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto,
 * ValueInfoProto, TypeProto, TensorShapeProto, OperatorSetIdProto).
 */

class Pb {
  private parts: number[] = [];
  private varint(v: number | bigint): void {
    let x = BigInt(v);
    if (x < 0n) x += 1n << 64n;
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x) b |= 0x80;
      this.parts.push(b);
    } while (x);
  }
  int(field: number, v: number): this {
    this.varint((field << 3) | 0);
    this.varint(v);
    return this;
  }
  bytes(field: number, b: Uint8Array): this {
    this.varint((field << 3) | 2);
    this.varint(b.length);
    for (const x of b) this.parts.push(x);
    return this;
  }
  str(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  msg(field: number, m: Pb): this {
    return this.bytes(field, m.done());
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

function valueInfo(name: string, dims: number[]): Pb {
  const shape = new Pb();
  for (const d of dims) shape.msg(1, new Pb().int(1, d));
  const tensorType = new Pb().int(1, 1 /* FLOAT */).msg(2, shape);
  return new Pb().str(1, name).msg(2, new Pb().msg(1, tensorType));
}

function tensor(name: string, dims: number[], data: Float32Array): Pb {
  const t = new Pb();
  for (const d of dims) t.int(1, d);
  t.int(2, 1 /* FLOAT */)
    .str(8, name)
    .bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return t;
}

function node(op: string, inputs: string[], outputs: string[], attrs: { name: string; i: number }[] = []): Pb {
  const n = new Pb();
  for (const i of inputs) n.str(1, i);
  for (const o of outputs) n.str(2, o);
  n.str(3, `${op}_${outputs[0]}`).str(4, op);
  for (const a of attrs) n.msg(5, new Pb().str(1, a.name).int(20, 2 /* INT */).int(3, a.i));
  return n;
}

/**
 * A top-down "pose model" with SimCC outputs whose answer is fixed by the test:
 * input `input` [1, 3, H, W] → simcc_x = cx + 0·ΣX (shape [1, K, W·r]), simcc_y likewise
 * ([1, K, H·r]); the input feeds the outputs so the graph is a real function of it.
 */
export function simccTestModel(opts: {
  width: number;
  height: number;
  keypoints: number;
  simccX: Float32Array;
  simccY: Float32Array;
  splitRatio?: number;
}): Uint8Array {
  const r = opts.splitRatio ?? 2,
    K = opts.keypoints;
  const wx = Math.round(opts.width * r),
    hy = Math.round(opts.height * r);
  if (opts.simccX.length !== K * wx || opts.simccY.length !== K * hy) throw new RangeError('simcc arrays must be K×W·r and K×H·r');
  const g = new Pb()
    .msg(1, node('ReduceSum', ['input'], ['s'], [{ name: 'keepdims', i: 0 }]))
    .msg(1, node('Mul', ['s', 'zero'], ['z']))
    .msg(1, node('Add', ['cx', 'z'], ['simcc_x']))
    .msg(1, node('Add', ['cy', 'z'], ['simcc_y']))
    .str(2, 'simcc_test')
    .msg(5, tensor('zero', [], new Float32Array([0])))
    .msg(5, tensor('cx', [1, K, wx], opts.simccX))
    .msg(5, tensor('cy', [1, K, hy], opts.simccY))
    .msg(11, valueInfo('input', [1, 3, opts.height, opts.width]))
    .msg(12, valueInfo('simcc_x', [1, K, wx]))
    .msg(12, valueInfo('simcc_y', [1, K, hy]));
  return new Pb().int(1, 8 /* IR v8 */).str(2, 'athlete-intelligence-test').msg(7, g).msg(8, new Pb().str(1, '').int(2, 13)).done();
}
