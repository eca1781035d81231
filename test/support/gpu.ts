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
