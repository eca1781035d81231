/**
 * Which Vulkan drivers the system's loader would find, and whether the GPU's own diagnostics are shown.
 *
 * Why this exists: on a machine with no Vulkan driver installed (the usual case for SwiftShader
 * users), asking Dawn for an adapter through the system loader prints, on every GPU run,
 *   Warning: vkCreateInstance: Found no drivers!
 *   Warning: vkCreateInstance failed with VK_ERROR_INCOMPATIBLE_DRIVER
 *       at CheckVkSuccessImpl (…/dawn/native/vulkan/VulkanError.cpp:106)
 * before device.ts falls back to SwiftShader. Dawn writes these from native code straight to file
 * descriptor 2 (measured: replacing process.stderr.write and console.* leaves them on the terminal),
 * so they cannot be filtered in-process: Node has no dup()/dup2(), so fd 2 cannot be redirected and
 * later restored (reopening /proc/self/fd/2 fails for the sockets a parent's spawn() hands its child,
 * and a child process wrapping every command would cost a second start-up and the terminal's
 * TTY-ness). Instead the doomed attempt is not made: when the loader's search path holds no driver
 * manifest at all, "Found no drivers" is certain, and device.ts goes straight to SwiftShader.
 * With --verbose (setGpuVerbose) the system loader is tried anyway, so its and Dawn's messages show.
 *
 * The search path is the Vulkan loader's on Linux (LoaderDriverInterface, "Driver Discovery on
 * Linux"): VK_DRIVER_FILES or VK_ICD_FILENAMES when set (then only those), else icd.d/ under
 * $XDG_CONFIG_HOME, $XDG_CONFIG_DIRS, /etc, $XDG_DATA_HOME and $XDG_DATA_DIRS, plus VK_ADD_DRIVER_FILES.
 */
// node:fs, node:os and node:path are imported where used: this module is in the viewer's bundle (through
// device.ts), where node:* stays external and must never be loaded (scripts/build-viewer.mjs)

let verbose = false;

/** Show the GPU driver's own diagnostics (try the system loader even where it has no driver). */
export function setGpuVerbose(on: boolean): void {
  verbose = on;
}

export function gpuVerbose(): boolean {
  return verbose;
}

type Fs = typeof import('node:fs');
type Path = typeof import('node:path');

/** The .json driver manifests in `dir` (none when it does not exist). */
function manifestsIn({ readdirSync }: Fs, { join }: Path, dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** A list entry of VK_DRIVER_FILES & co.: a manifest file, or a folder of them. */
function entryManifests(fs: Fs, path: Path, entry: string): string[] {
  if (!entry || !fs.existsSync(entry)) return [];
  return fs.statSync(entry).isDirectory() ? manifestsIn(fs, path, entry) : [entry];
}

/** The driver manifests the system Vulkan loader would read, as paths (empty: it would find no driver). */
export async function vulkanDriverManifests(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const { homedir } = await import('node:os');
  const { join } = path;
  const list = (v: string | undefined) => (v ?? '').split(':').filter(Boolean);
  const added = list(env.VK_ADD_DRIVER_FILES).flatMap((e) => entryManifests(fs, path, e));
  const override = env.VK_DRIVER_FILES ?? env.VK_ICD_FILENAMES;
  if (override !== undefined) return [...list(override).flatMap((e) => entryManifests(fs, path, e)), ...added];
  const home = env.HOME ?? homedir();
  const dirs = [
    env.XDG_CONFIG_HOME ?? join(home, '.config'),
    ...list(env.XDG_CONFIG_DIRS ?? '/etc/xdg'),
    '/etc',
    env.XDG_DATA_HOME ?? join(home, '.local', 'share'),
    ...list(env.XDG_DATA_DIRS ?? '/usr/local/share:/usr/share'),
  ];
  return [...dirs.flatMap((d) => manifestsIn(fs, path, join(d, 'vulkan', 'icd.d'))), ...added];
}
