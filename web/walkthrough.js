// The walkthrough page of `ibrr export --html`: shows the baked scene embedded in page.html as a .glb,
// shaded exactly as `ibrr render` shades a baked scene, with the native viewer's walking controls.
//
// Bundled at build time (esbuild, one IIFE) and inlined into page.html by the exporter; nothing is
// fetched at view time. The .glb convention (see the exporter):
//   root extras.ibrr = {version: 1, source, incidentRadiance: {bufferView, width, height, format:
//     "rgba16f"}, exposureStops, tone: "srgb"|"filmic", bounds: {min, max}}
//   material extras.ibrr = {albedo: [r,g,b] linear, emission: [r,g,b] linear (front side only),
//     albedoTexture: texture index or -1}
//   primitives carry POSITION, NORMAL, TEXCOORD_0 (albedo UV) and TEXCOORD_1 (light atlas UV), glTF
//   convention (v = 0 is the image's first row).
//   one perspective camera node per manifest camera.
//
// Test hooks: window.ibrr = {ready, cameraName, frameMs, loadSeconds, renderer, frames, setCamera(i),
// exposureStops, config, error}.
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

// Controls, as the native viewer (src/viewer/first_person_camera.hpp).
const WALK_DIAGONALS_PER_SECOND = 0.2;
const RUN_FACTOR = 4;
const SCROLL_FACTOR = 1.25;
const RADIANS_PER_PIXEL = 0.003;
const MAX_PITCH = 1.55;
const EXPOSURE_STEP = 0.5;
const MAX_STEP_SECONDS = 0.5;  // a key held through a longer gap between frames (a hidden tab) walks no further
const FRAME_TIME_WINDOW = 30;  // frames in the HUD's running mean
const KEY_HELP = 'WASD move · Q/E down/up · Shift run · wheel speed · drag look · +/− exposure · 1–9/C camera · H hide';

const hooks = {
  ready: false,
  cameraName: '',
  frameMs: 0,
  loadSeconds: 0,
  renderer: '',
  frames: 0,
  exposureStops: 0,
  config: null,
  error: null,
  setCamera() { throw new Error('ibrr: the scene is not loaded yet'); },
};
window.ibrr = hooks;

// ---------------------------------------------------------------------------------------------
// Errors: one line in the HUD, then thrown so that a test driver sees a page error.

function fail(error) {
  const message = `ibrr: ${error && error.message ? error.message : String(error)}`;
  hooks.error = message;
  const hud = document.getElementById('ibrr-hud');
  if (hud) {
    hud.hidden = false;
    hud.textContent = message;
    hud.classList.add('error');
  }
  // Rethrown outside the promise chain: an uncaught error, not merely an unhandled rejection.
  setTimeout(() => { throw new Error(message); });
}

// ---------------------------------------------------------------------------------------------
// The embedded data.

function readConfig() {
  const element = document.getElementById('ibrr-config');
  if (!element) throw new Error('the page has no #ibrr-config element');
  try {
    return JSON.parse(element.textContent);
  } catch (error) {
    throw new Error(`#ibrr-config is not JSON: ${error.message}`);
  }
}

// The .glb, base64 in <script type="application/octet-stream" id="ibrr-glb"> (whitespace allowed).
function readGlb() {
  const element = document.getElementById('ibrr-glb');
  if (!element) throw new Error('the page has no #ibrr-glb element');
  let binary;
  try {
    binary = atob(element.textContent.replace(/\s+/g, ''));
  } catch (error) {
    throw new Error('#ibrr-glb is not base64');
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
  element.textContent = '';  // frees the (large) text
  return bytes.buffer;
}

// ---------------------------------------------------------------------------------------------
// The glb: three's GLTFLoader builds the geometry, cameras and textures. The glb's own materials
// (unlit, showing the 8-bit baked PNG for generic viewers) are replaced by placeholders so their
// PNGs are never decoded; the shading materials are made from extras.ibrr afterwards.

class SkipMaterialsPlugin {
  constructor(parser) { this.parser = parser; this.name = 'ibrr_skip_materials'; }
  loadMaterial() { return Promise.resolve(new THREE.MeshBasicMaterial()); }
}

async function parseGlb(buffer) {
  const loader = new GLTFLoader();
  loader.register((parser) => new SkipMaterialsPlugin(parser));
  let gltf;
  try {
    gltf = await loader.parseAsync(buffer, '');
  } catch (error) {
    throw new Error(`the embedded .glb does not load: ${error && error.message ? error.message : error}`);
  }
  const info = gltf.parser.json.extras && gltf.parser.json.extras.ibrr;
  if (!info) throw new Error('the .glb has no extras.ibrr (not written by `ibrr export`?)');
  if (info.version !== 1) throw new Error(`the .glb's extras.ibrr.version is ${info.version}, this page reads 1`);
  if (info.tone !== 'srgb' && info.tone !== 'filmic') throw new Error(`unknown tone curve "${info.tone}"`);
  if (!info.incidentRadiance || !info.bounds) throw new Error('extras.ibrr lacks incidentRadiance or bounds');
  return { gltf, info };
}

// The incident radiance H: W·H RGBA half floats, row 0 = the texture row at v = 0. A DataTexture
// with flipY false uploads row 0 at GL t = 0, and TEXCOORD_1's v is used as t unchanged (three
// does not flip glTF UVs), so texture(incident, uv1) addresses it as the exporter wrote it.
async function loadIncidentTexture(parser, incident) {
  if (incident.format !== 'rgba16f') throw new Error(`unknown incident radiance format "${incident.format}"`);
  const { width, height } = incident;
  const buffer = await parser.getDependency('bufferView', incident.bufferView);
  if (buffer.byteLength !== width * height * 8)
    throw new Error(`the incident radiance buffer view holds ${buffer.byteLength} bytes, not ${width}·${height}·8`);
  const texture = new THREE.DataTexture(new Uint16Array(buffer), width, height, THREE.RGBAFormat, THREE.HalfFloatType);
  texture.minFilter = THREE.LinearFilter;
  texture.magFilter = THREE.LinearFilter;
  texture.generateMipmaps = false;
  texture.wrapS = THREE.ClampToEdgeWrapping;
  texture.wrapT = THREE.ClampToEdgeWrapping;
  texture.flipY = false;
  texture.colorSpace = THREE.NoColorSpace;
  texture.needsUpdate = true;
  return texture;
}

// ---------------------------------------------------------------------------------------------
// Shading: L = (front ? L_e : 0) + albedo · albedoMap(uv) · H(uv1), then 2^stops, then the tone
// curve and the sRGB encoding, as toneMapChannel() in src/util/image.cpp. The result goes to the
// canvas as is (RawShaderMaterial: three adds no colour management).

const VERTEX_SHADER = /* glsl */ `
precision highp float;
uniform mat4 modelViewMatrix;
uniform mat4 projectionMatrix;
in vec3 position;
in vec2 uv;   // TEXCOORD_0: albedo texture
in vec2 uv1;  // TEXCOORD_1: light atlas
out vec2 vUv;
out vec2 vUv1;
void main() {
  vUv = uv;
  vUv1 = uv1;
  gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0);
}`;

const FRAGMENT_SHADER = /* glsl */ `
precision highp float;
uniform vec3 albedo;
uniform vec3 emission;
uniform sampler2D incident;   // H, linear, per unit albedo
#ifdef HAS_ALBEDO_MAP
uniform sampler2D albedoMap;  // sRGB texture: sampled as linear
#endif
uniform float exposureScale;  // 2^exposureStops
in vec2 vUv;
in vec2 vUv1;
out vec4 fragColor;

vec3 srgbEncode(vec3 x) {
  vec3 low = 12.92 * x;
  vec3 high = 1.055 * pow(x, vec3(1.0 / 2.4)) - 0.055;
  return mix(high, low, vec3(lessThanEqual(x, vec3(0.0031308))));
}

// Non-finite channels (an overflowed half float) count as 0, as in toneMapChannel().
float finiteOrZero(float x) { return isnan(x) || isinf(x) ? 0.0 : x; }

void main() {
  vec3 reflectance = albedo;
#ifdef HAS_ALBEDO_MAP
  reflectance *= texture(albedoMap, vUv).rgb;
#endif
  vec3 radiance = (gl_FrontFacing ? emission : vec3(0.0)) + reflectance * texture(incident, vUv1).rgb;
  radiance = vec3(finiteOrZero(radiance.r), finiteOrZero(radiance.g), finiteOrZero(radiance.b));
  vec3 x = max(radiance, vec3(0.0)) * exposureScale;
#ifdef TONE_FILMIC
  x = x * (2.51 * x + 0.03) / (x * (2.43 * x + 0.59) + 0.14);  // Narkowicz's ACES fit
#endif
  fragColor = vec4(srgbEncode(clamp(x, 0.0, 1.0)), 1.0);
}`;

function vec3Of(value, what) {
  if (!Array.isArray(value) || value.length !== 3 || !value.every(Number.isFinite))
    throw new Error(`${what} is not an array of 3 numbers`);
  return new THREE.Vector3(value[0], value[1], value[2]);
}

// One material per glb material; `shared` holds the uniforms all materials share (exposure, H).
async function makeMaterial(parser, index, shared, tone) {
  const def = parser.json.materials[index];
  const params = def && def.extras && def.extras.ibrr;
  if (!params) throw new Error(`material ${index} has no extras.ibrr`);
  const uniforms = {
    albedo: { value: vec3Of(params.albedo, `material ${index}'s albedo`) },
    emission: { value: vec3Of(params.emission, `material ${index}'s emission`) },
    incident: shared.incident,
    exposureScale: shared.exposureScale,
  };
  const defines = {};
  if (tone === 'filmic') defines.TONE_FILMIC = '';
  const textureIndex = params.albedoTexture ?? -1;
  if (textureIndex >= 0) {
    const map = await parser.getDependency('texture', textureIndex);
    map.colorSpace = THREE.SRGBColorSpace;  // decoded to linear by GL on sampling
    map.needsUpdate = true;
    uniforms.albedoMap = { value: map };
    defines.HAS_ALBEDO_MAP = '';
  }
  return new THREE.RawShaderMaterial({
    name: def.name || `material ${index}`,
    glslVersion: THREE.GLSL3,
    side: THREE.DoubleSide,
    uniforms,
    defines,
    vertexShader: VERTEX_SHADER,
    fragmentShader: FRAGMENT_SHADER,
  });
}

// Swaps every mesh's placeholder for the shading material of its primitive's glb material.
async function applyMaterials(gltf, shared, tone) {
  const parser = gltf.parser;
  const materials = new Map();  // glb material index → RawShaderMaterial
  const meshes = [];
  gltf.scene.traverse((object) => { if (object.isMesh) meshes.push(object); });
  for (const mesh of meshes) {
    const ref = parser.associations.get(mesh);
    const primitive = ref && parser.json.meshes[ref.meshes].primitives[ref.primitives ?? 0];
    const index = primitive ? primitive.material : undefined;
    if (index === undefined) throw new Error(`mesh "${mesh.name}" has a primitive without a material`);
    if (!materials.has(index)) materials.set(index, await makeMaterial(parser, index, shared, tone));
    mesh.material = materials.get(index);
  }
  if (meshes.length === 0) throw new Error('the .glb has no mesh');
}

// ---------------------------------------------------------------------------------------------
// Cameras: the glTF camera nodes, in the order of the glb's cameras array, as world position,
// orientation (a glTF camera looks down its −Z with +Y up, as three's) and vertical fov.

async function collectCameras(gltf) {
  const parser = gltf.parser;
  const json = parser.json;
  gltf.scene.updateMatrixWorld(true);
  const found = [];
  for (let nodeIndex = 0; nodeIndex < (json.nodes || []).length; ++nodeIndex) {
    const cameraIndex = json.nodes[nodeIndex].camera;
    if (cameraIndex === undefined) continue;
    const def = json.cameras[cameraIndex];
    if (def.type !== 'perspective') throw new Error(`camera ${cameraIndex} is ${def.type}, not perspective`);
    const node = await parser.getDependency('node', nodeIndex);
    const position = new THREE.Vector3();
    const quaternion = new THREE.Quaternion();
    node.matrixWorld.decompose(position, quaternion, new THREE.Vector3());
    found.push({
      cameraIndex,
      name: json.nodes[nodeIndex].name || def.name || `camera ${cameraIndex}`,
      position,
      quaternion,
      fovDegrees: THREE.MathUtils.radToDeg(def.perspective.yfov),
    });
  }
  found.sort((a, b) => a.cameraIndex - b.cameraIndex);
  return found;
}

// Without cameras: the bounds' centre seen from +Z, one diagonal away.
function defaultCamera(bounds) {
  const center = bounds.getCenter(new THREE.Vector3());
  const diagonal = bounds.getSize(new THREE.Vector3()).length();
  const helper = new THREE.PerspectiveCamera(45);
  helper.position.copy(center).add(new THREE.Vector3(0, 0, diagonal));
  helper.lookAt(center);
  return { name: 'default', position: helper.position.clone(), quaternion: helper.quaternion.clone(), fovDegrees: 45 };
}

// ---------------------------------------------------------------------------------------------
// The walker: the view camera, moved and turned as the native viewer's FirstPersonCamera.

class Walker {
  constructor(camera, bounds) {
    this.camera = camera;
    this.bounds = bounds;
    this.diagonal = Math.max(bounds.getSize(new THREE.Vector3()).length(), 1e-6);
    this.speed = WALK_DIAGONALS_PER_SECOND * this.diagonal;  // scene units per second, walking
    this.minSpeed = 1e-4 * this.speed;
    this.maxSpeed = 1e3 * this.speed;
    this.name = '';
  }

  setView(view) {
    this.camera.position.copy(view.position);
    this.camera.quaternion.copy(view.quaternion);
    this.camera.fov = view.fovDegrees;
    this.name = view.name;
  }

  forward() { return new THREE.Vector3(0, 0, -1).applyQuaternion(this.camera.quaternion); }

  // seconds: how long each direction was walked (x right, y world up, z forward; negative =
  // the opposite key); moves speed · seconds along each (×RUN_FACTOR when running).
  move(seconds, run) {
    if (seconds.x === 0 && seconds.y === 0 && seconds.z === 0) return;
    const right = new THREE.Vector3(1, 0, 0).applyQuaternion(this.camera.quaternion);
    const step = right.multiplyScalar(seconds.x)
      .addScaledVector(new THREE.Vector3(0, 1, 0), seconds.y)
      .addScaledVector(this.forward(), seconds.z)
      .multiplyScalar(this.speed * (run ? RUN_FACTOR : 1));
    this.camera.position.add(step);
    this.name = 'walk';
  }

  // Mouse motion (dx, dy) pixels, dy > 0 down: yaw about world +Y (mouse right turns right), pitch
  // about the camera's right axis, limited to ±MAX_PITCH. The new orientation keeps world +Y up.
  turn(dx, dy) {
    if (dx === 0 && dy === 0) return;
    const f = this.forward();
    let pitch = Math.asin(THREE.MathUtils.clamp(f.y, -1, 1));
    let yaw = Math.atan2(f.x, -f.z);  // 0 looking down −Z, π/2 looking down +X
    yaw += dx * RADIANS_PER_PIXEL;
    pitch = THREE.MathUtils.clamp(pitch - dy * RADIANS_PER_PIXEL, -MAX_PITCH, MAX_PITCH);
    const turned = new THREE.Vector3(Math.cos(pitch) * Math.sin(yaw), Math.sin(pitch), -Math.cos(pitch) * Math.cos(yaw));
    this.camera.up.set(0, 1, 0);
    this.camera.lookAt(turned.add(this.camera.position));
    this.name = 'walk';
  }

  scaleSpeed(wheelSteps) {
    this.speed = THREE.MathUtils.clamp(this.speed * Math.pow(SCROLL_FACTOR, wheelSteps), this.minSpeed, this.maxSpeed);
  }

  // far = 1.01 × the farthest bounds corner along the view direction (≥ 1e-3 · diagonal);
  // near = max(1e-4 · diagonal, 1e-5 · far).
  updateClipping(aspect) {
    const f = this.forward();
    const eye = this.camera.position;
    const { min, max } = this.bounds;
    let farthest = -Infinity;
    for (let corner = 0; corner < 8; ++corner) {
      const p = new THREE.Vector3(corner & 1 ? max.x : min.x, corner & 2 ? max.y : min.y, corner & 4 ? max.z : min.z);
      farthest = Math.max(farthest, p.sub(eye).dot(f));
    }
    const far = Math.max(1.01 * farthest, 1e-3 * this.diagonal);
    this.camera.far = far;
    this.camera.near = Math.max(1e-4 * this.diagonal, 1e-5 * far);
    this.camera.aspect = aspect;
    this.camera.updateProjectionMatrix();
  }
}

// ---------------------------------------------------------------------------------------------
// Input.

// Keys held, by KeyboardEvent.code (layout- and Shift-independent for the letters), with the time
// each was held since the last frame: a walk lasts exactly as long as its key is down, however the
// frames fall (a key pressed just after a slow frame does not move for that frame's whole gap; a
// tap between two frames still moves).
class KeyTracker {
  constructor() {
    this.down = new Map();      // code → when it went down, or the last frame, if later (ms)
    this.released = new Map();  // code → seconds held since the last frame by keys now up
  }

  press(code, time) { if (!this.down.has(code)) this.down.set(code, time); }

  release(code, time) {
    const start = this.down.get(code);
    if (start === undefined) return;
    this.down.delete(code);
    this.released.set(code, (this.released.get(code) ?? 0) + Math.max(time - start, 0) / 1000);
  }

  isDown(code) { return this.down.has(code); }

  clear() { this.down.clear(); this.released.clear(); }

  // Seconds each key was held since the previous call (at most MAX_STEP_SECONDS); restarts the
  // clocks of the keys still down at `now`.
  consume(now) {
    const held = this.released;
    this.released = new Map();
    for (const [code, start] of this.down) {
      held.set(code, (held.get(code) ?? 0) + Math.max(now - start, 0) / 1000);
      this.down.set(code, now);
    }
    for (const [code, seconds] of held) held.set(code, Math.min(seconds, MAX_STEP_SECONDS));
    return held;
  }
}

// event.timeStamp and performance.now() share the page's time origin.
function trackKeys(target, keys) {
  target.addEventListener('keydown', (event) => keys.press(event.code, event.timeStamp));
  target.addEventListener('keyup', (event) => keys.release(event.code, event.timeStamp));
  window.addEventListener('blur', () => keys.clear());
}

// Signed seconds walked along each camera-frame axis (x right, y world up, z forward).
function heldMotion(held) {
  const axis = (plus, minus) => (held.get(plus) ?? 0) - (held.get(minus) ?? 0);
  return { x: axis('KeyD', 'KeyA'), y: axis('KeyE', 'KeyQ'), z: axis('KeyW', 'KeyS') };
}

// One wheel notch = one step: Chrome reports ~100 px or 3 lines a notch; scrolling up speeds up.
function wheelSteps(event) {
  const perStep = event.deltaMode === 1 ? 3 : event.deltaMode === 2 ? 1 : 100;
  return -event.deltaY / perStep;
}

function attachControls(app) {
  const { canvas, walker } = app;
  trackKeys(window, app.keys);
  window.addEventListener('keydown', (event) => {
    if (event.repeat) return;
    const digit = /^(Digit|Numpad)([1-9])$/.exec(event.code);
    if (digit) {
      const index = Number(digit[2]) - 1;
      if (index < app.cameras.length) app.selectCamera(index);  // keys past the last camera do nothing
    } else if (event.code === 'KeyC') app.selectCamera((app.cameraIndex + 1) % app.cameras.length);
    else if (event.code === 'KeyH') app.hud.hidden = !app.hud.hidden;
    else if (event.key === '+' || event.key === '=' || event.code === 'NumpadAdd') app.setExposure(app.exposureStops + EXPOSURE_STEP);
    else if (event.key === '-' || event.key === '_' || event.code === 'NumpadSubtract') app.setExposure(app.exposureStops - EXPOSURE_STEP);
  });
  canvas.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    app.looking = true;
    canvas.setPointerCapture(event.pointerId);
  });
  canvas.addEventListener('pointermove', (event) => {
    if (app.looking) walker.turn(event.movementX, event.movementY);
  });
  const stopLooking = () => { app.looking = false; };
  canvas.addEventListener('pointerup', stopLooking);
  canvas.addEventListener('pointercancel', stopLooking);
  canvas.addEventListener('wheel', (event) => {
    event.preventDefault();
    walker.scaleSpeed(wheelSteps(event));
  }, { passive: false });
  window.addEventListener('resize', () => app.resize());
}

// ---------------------------------------------------------------------------------------------
// The page.

function createRenderer(canvas) {
  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({ canvas, antialias: false, preserveDrawingBuffer: true });
  } catch (error) {
    throw new Error(`WebGL 2 is not available (${error && error.message ? error.message : error})`);
  }
  renderer.setPixelRatio(1);
  renderer.toneMapping = THREE.NoToneMapping;
  renderer.setClearColor(0x000000, 1);
  return renderer;
}

// The GPU's name: the unmasked string where the browser gives it.
function rendererString(renderer) {
  const gl = renderer.getContext();
  const debug = gl.getExtension('WEBGL_debug_renderer_info');
  return String(gl.getParameter(debug ? debug.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
}

class App {
  constructor(canvas, hud, renderer, scene, cameras, bounds, shared, tone) {
    Object.assign(this, { canvas, hud, renderer, scene, cameras, shared, tone });
    this.walker = new Walker(new THREE.PerspectiveCamera(), bounds);
    this.cameraIndex = 0;
    this.exposureStops = 0;
    this.looking = false;
    this.frameTimes = [];
    this.lastTime = null;
    this.keys = new KeyTracker();
  }

  selectCamera(index) {
    if (!Number.isInteger(index) || index < 0 || index >= this.cameras.length)
      throw new RangeError(`no camera ${index} (the page has ${this.cameras.length})`);
    this.cameraIndex = index;
    this.walker.setView(this.cameras[index]);
  }

  setExposure(stops) {
    this.exposureStops = stops;
    this.shared.exposureScale.value = Math.pow(2, stops);
    hooks.exposureStops = stops;
  }

  resize() {
    this.renderer.setSize(window.innerWidth, window.innerHeight);
  }

  // Running mean of the last FRAME_TIME_WINDOW intervals between frames.
  recordFrameTime(ms) {
    this.frameTimes.push(ms);
    if (this.frameTimes.length > FRAME_TIME_WINDOW) this.frameTimes.shift();
    return this.frameTimes.reduce((a, b) => a + b, 0) / this.frameTimes.length;
  }

  updateHud() {
    if (this.hud.hidden) return;
    const sign = this.exposureStops >= 0 ? '+' : '−';
    this.hud.textContent =
      `${this.walker.name}   ${hooks.frameMs.toFixed(1)} ms   exposure ${sign}${Math.abs(this.exposureStops).toFixed(1)} stops (${this.tone})\n${KEY_HELP}`;
  }

  frame(time) {
    if (this.lastTime !== null) hooks.frameMs = this.recordFrameTime(time - this.lastTime);
    this.lastTime = time;
    const run = this.keys.isDown('ShiftLeft') || this.keys.isDown('ShiftRight');
    this.walker.move(heldMotion(this.keys.consume(performance.now())), run);
    const size = this.renderer.getSize(new THREE.Vector2());
    this.walker.updateClipping(size.x / Math.max(size.y, 1));
    this.renderer.render(this.scene, this.walker.camera);
    hooks.cameraName = this.walker.name;
    hooks.frames += 1;
    if (!hooks.ready) {
      hooks.loadSeconds = performance.now() / 1000;  // time origin = navigation start
      hooks.ready = true;
    }
    this.updateHud();
  }

  start() {
    const loop = (time) => {
      try {
        this.frame(time);
      } catch (error) {
        fail(error);
        return;
      }
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  }
}

async function main() {
  const canvas = document.getElementById('ibrr-canvas');
  const hud = document.getElementById('ibrr-hud');
  if (!canvas || !hud) throw new Error('the page has no #ibrr-canvas or #ibrr-hud');
  hooks.config = readConfig();
  const renderer = createRenderer(canvas);
  hooks.renderer = rendererString(renderer);
  renderer.setSize(window.innerWidth, window.innerHeight);

  const { gltf, info } = await parseGlb(readGlb());
  const bounds = new THREE.Box3(vec3Of(info.bounds.min, 'bounds.min'), vec3Of(info.bounds.max, 'bounds.max'));
  const shared = {
    incident: { value: await loadIncidentTexture(gltf.parser, info.incidentRadiance) },
    exposureScale: { value: 1 },
  };
  await applyMaterials(gltf, shared, info.tone);
  const cameras = await collectCameras(gltf);
  if (cameras.length === 0) cameras.push(defaultCamera(bounds));

  const app = new App(canvas, hud, renderer, gltf.scene, cameras, bounds, shared, info.tone);
  app.setExposure(Number(info.exposureStops) || 0);
  app.selectCamera(0);
  attachControls(app);
  hooks.setCamera = (index) => {
    app.selectCamera(index);
    hooks.cameraName = app.walker.name;
  };
  hooks.cameras = cameras.map((c) => c.name);
  app.start();
}

main().catch(fail);
