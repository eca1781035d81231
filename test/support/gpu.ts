/** What the GPU tests share. */

/**
 * MAP_READ buffers created while `f` runs: a readback needs one (storage buffers cannot be mapped), so
 * 0 shows that recording a frame read nothing back.
 */
export function mapReadBuffersCreatedBy(device: GPUDevice, f: () => void): number {
  const create = device.createBuffer.bind(device);
  let made = 0;
  device.createBuffer = (d: GPUBufferDescriptor) => {
    if (d.usage & GPUBufferUsage.MAP_READ) made++;
    return create(d);
  };
  try {
    f();
  } finally {
    device.createBuffer = create;
  }
  return made;
}

/**
 * The GPU contact stages' overflow case: 40 small spheres on a shell of 5 m, apart at the start (no pair,
 * so the slots are the floor max(256, 8 n) = 320) and flying inward at 10 m/s with no gravity: about frame
 * 28 they meet at the centre, where the speculative margins (h |v| = 0.17 m) make every pair a candidate,
 * 780 pairs. A start-pose count (contactPairCapacity) cannot foresee them.
 */
export function convergingSpheres(): import('../../src/model/world.js').WorldDesc {
  return {
    gravity: [0, 0, 0],
    bodies: Array.from({ length: 40 }, (_, i) => {
      // a Fibonacci point on the unit sphere
      const y = 1 - (2 * (i + 0.5)) / 40, rr = Math.sqrt(1 - y * y), phi = i * Math.PI * (3 - Math.sqrt(5));
      const u = [rr * Math.cos(phi), y, rr * Math.sin(phi)];
      return { shape: { type: 'sphere' as const, radius: 0.05 }, density: 1000, position: u.map((x) => 5 * x) as [number, number, number], linearVelocity: u.map((x) => -10 * x) as [number, number, number] };
    }),
    constraints: [],
  };
}
