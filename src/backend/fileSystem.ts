import * as tf from '@tensorflow/tfjs';
import { argumentError } from '../core/errors';

/**
 * Saving a model to disk and loading it back without tfjs-node. `model.save('file://…')` needs a
 * handler for `file://`, and only tfjs-node registers one; tfjs's IOHandler API lets any code
 * provide it. These files are the ones tfjs-node's handler writes (`model.json` with the
 * topology and a weights manifest, `weights.bin` with every weight, optimizer weights included
 * under `includeOptimizer`), so either side reads what the other wrote.
 */

const OWNER = 'fileSystem';
const MODEL_JSON = 'model.json';
const WEIGHTS_BIN = 'weights.bin';

/**
 * `node:fs` and `node:path`, loaded when a handler is used and required by names bundlers do not
 * follow: the backend entry also bundles for browsers (test/backend/kernels/nativeBlas.test.ts).
 */
function node(): { fs: typeof import('node:fs'); path: typeof import('node:path') } {
  const builtin = (name: string): unknown => require(name);
  return { fs: builtin('node:fs') as typeof import('node:fs'), path: builtin('node:path') as typeof import('node:path') };
}

/**
 * A handler that saves a model into a folder and loads it from there, as tfjs-node's
 * `tf.io.fileSystem` does, for `@tensorflow/tfjs` on any backend in Node:
 *
 * ```ts
 * await model.save(fileSystem('file://./my-model'));                 // my-model/model.json, weights.bin
 * const loaded = await tf.loadLayersModel(fileSystem('./my-model'));  // the folder or its model.json
 * ```
 *
 * Saving creates the folder when needed and writes `weights.bin` before `model.json`, so that a
 * folder with a `model.json` always has the weights it names.
 *
 * @param location The folder, or its `model.json`, as a path or a `file://` URL (relative to the
 *   current directory unless absolute).
 */
export function fileSystem(location: string): tf.io.IOHandler {
  if (typeof location !== 'string' || location.replace(/^file:\/\//, '') === '') {
    throw argumentError(OWNER, 'location', 'a folder, or its model.json, as a path or a "file://" URL', location);
  }
  const { path } = node();
  const target = path.resolve(location.replace(/^file:\/\//, ''));
  const isJson = target.endsWith('.json');
  const folder = isJson ? path.dirname(target) : target;
  const jsonFile = isJson ? target : path.join(folder, MODEL_JSON);
  return {
    save: async (artifacts) => {
      if (artifacts.modelTopology instanceof ArrayBuffer) {
        throw new Error(`${OWNER}: saving a model whose topology is binary (a GraphModel's protobuf) is not supported; save a LayersModel.`);
      }
      const { fs } = node();
      await fs.promises.mkdir(folder, { recursive: true });
      const weights = joinBuffers(artifacts.weightData);
      await fs.promises.writeFile(path.join(folder, WEIGHTS_BIN), new Uint8Array(weights));
      await fs.promises.writeFile(jsonFile, JSON.stringify(modelJson(artifacts)));
      return { modelArtifactsInfo: tf.io.getModelArtifactsInfoForJSON({ ...artifacts, weightData: weights }) };
    },
    load: async () => {
      const { fs } = node();
      let text: string;
      try {
        text = await fs.promises.readFile(jsonFile, 'utf8');
      } catch (e) {
        throw new Error(`${OWNER}: cannot read ${jsonFile} (${(e as Error).message.split('\n')[0]}); pass the folder a model was saved into, or its model.json.`);
      }
      const json = JSON.parse(text) as tf.io.ModelJSON;
      return tf.io.getModelArtifactsForJSON(json, async (manifest) => {
        const specs = manifest.flatMap((group) => group.weights);
        const files = manifest.flatMap((group) => group.paths);
        const buffers = await Promise.all(files.map(async (file) => toArrayBuffer(await fs.promises.readFile(path.join(folder, file)))));
        return [specs, joinBuffers(buffers)];
      });
    },
  };
}

/** The `model.json` tfjs-node writes: topology, formats and a one-file weights manifest. */
function modelJson(artifacts: tf.io.ModelArtifacts): tf.io.ModelJSON {
  const json: tf.io.ModelJSON = {
    modelTopology: artifacts.modelTopology as object,
    format: artifacts.format,
    generatedBy: artifacts.generatedBy,
    convertedBy: artifacts.convertedBy,
    weightsManifest: [{ paths: [WEIGHTS_BIN], weights: artifacts.weightSpecs ?? [] }],
  };
  // Optional parts only when present, as tfjs writes them (a `null` would be read back as a value).
  for (const key of ['trainingConfig', 'signature', 'userDefinedMetadata', 'modelInitializer', 'initializerSignature'] as const) {
    if (artifacts[key] != null) (json as unknown as Record<string, unknown>)[key] = artifacts[key];
  }
  return json;
}

/** One buffer from tfjs's weight data: one ArrayBuffer (tfjs before 4.10) or several. */
function joinBuffers(data: ArrayBuffer | ArrayBuffer[] | undefined): ArrayBuffer {
  const parts = data === undefined ? [] : Array.isArray(data) ? data : [data];
  if (parts.length === 1) return parts[0];
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(new Uint8Array(part), offset);
    offset += part.byteLength;
  }
  return joined.buffer;
}

/** The bytes of a Buffer as an ArrayBuffer of their own (a Buffer may be a view on a shared pool). */
function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
