/** driver-floor's messages and their helps, by id: `MessageId` types every helper's reporter. */

/** The help of a finding judged on the pools: each pool's own why, and where the workload is scheduled. */
export const PER_POOL = 'Per pool: {{reasons}}{{pinned}}';

/** Why an install whose CUDA depends on the Python may not run, and how to make it one build. */
const BY_PYTHON =
  "pip installs the newest torch release that has wheels for the Python it runs with, and PyPI's torch wheels of a release are built for one CUDA ({{sources}}): which CUDA this install gets depends on the Python, and {{unknown}}. Where it does not run: {{reasons}}. {{why}}{{pinned}} {{fix}}";

/** Why each finding matters and how to fix it, filled from its data (src/rule.ts, `helps`). */
export const HELPS = {
  forwardCompat:
    'NVIDIA supports {{package}} on R{{branches}} drivers, and NVIDIA\'s images ship it, but only on data-center GPUs on Linux ("Forward Compatibility is applicable only for systems with: NVIDIA Data Center GPUs. Select NGC Server Ready SKUs of RTX cards. Jetson boards"). On other GPUs the container fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE.{{fleetNote}} Sources: {{sources}}',
  release:
    'CUDA {{cuda}} code needs at least the driver it was released with ({{needed}}, CUDA {{row}}): older drivers fail CUDA initialisation with "driver version is insufficient for CUDA runtime version". {{floor}} is needed only for later CUDA {{major}}.x releases.{{compatNote}} Sources: {{sources}}',
  beforeCompat:
    'Before CUDA 11 there is no minor-version compatibility: CUDA {{cuda}} code needs at least the driver of its own release ({{needed}}, CUDA {{row}}), and older drivers fail CUDA initialisation with "driver version is insufficient for CUDA runtime version". Upgrade the fleet driver or use an image of a CUDA it supports. Sources: {{sources}}',
  major:
    'A driver older than {{floor}} runs no CUDA {{major}}.x code newer than its own release: CUDA initialisation fails with "driver version is insufficient for CUDA runtime version".{{compatNote}} Upgrade the fleet driver or stay on CUDA {{previous}}.x. Sources: {{sources}}',
  noPool: PER_POOL,
  somePools: PER_POOL,
  pinned: PER_POOL,
  poolsCompat: PER_POOL,
  unmatched:
    'The pods cannot be scheduled on a node of the pools the baseline lists ({{labels}}), so either the fleet in the baseline is incomplete or the selector is wrong. Pools are matched by their labels, their GPUs (nvidia.com/gpu.product, nvidia.com/gpu.compute.*), their driver (nvidia.com/cuda.driver.*) and, for the GKE, EKS and AKS node-pool labels, their names.',
  noDockerfile:
    "Without the Dockerfile, the image's CUDA is known only from its name{{says}}. Correct the path (it is read from the repository root). {{images}}",
  refusedEverywhere: 'Per pool: {{reasons}}{{pinned}}',
  byPython: BY_PYTHON,
  byPythonNone: BY_PYTHON,
  refused:
    'The NVIDIA Container Toolkit\'s legacy path (docker run --gpus, the nvidia runtime before toolkit 1.18, mode = "legacy") evaluates the image\'s NVIDIA_REQUIRE_CUDA on every GPU and refuses to start the container: "{{condition}}" (driver {{driver}} reports CUDA {{driverCuda}}; no brand term admits {{gpus}}). Use an image whose CUDA the driver supports, upgrade the driver, or start containers through CDI (which does not check it). Source: {{source}}',
  requireCudaBrand:
    "The container starts when any space-separated term holds; on the fleet's driver only terms that name a GPU brand do. Source: {{source}}",
  requireCuda:
    'The NVIDIA container runtime starts a container only when one space-separated term of NVIDIA_REQUIRE_CUDA holds for the host; none does for {{driver}}. Lower the requirement or upgrade the fleet. Source: {{source}}',
  driverInImage:
    'Containers use the host\'s kernel driver; the NVIDIA container toolkit mounts the matching user-space libraries at run time. Driver libraries baked into an image break with "Failed to initialize NVML: Driver/library version mismatch" whenever the host driver differs. Remove the package and let the toolkit inject the driver.',
  minor:
    "Driver {{fleet}} is a CUDA {{major}}.x driver, so CUDA {{cuda}} code runs under minor-version compatibility: PTX that is newer than the driver cannot be JIT-compiled, and APIs added after the driver's CUDA version fail with cudaErrorCallRequiresNewerDriver. Needed for everything: >= {{needed}} (CUDA {{row}}). Sources: {{sources}}",
};

/** A release that needs its own Table 3 row's driver. */
const RELEASE = '{{subject}} needs CUDA {{cuda}}, which needs NVIDIA driver >= {{needed}}; the fleet runs {{fleet}}';

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
export const MESSAGES = {
  major: '{{subject}} needs CUDA {{major}}.x, which needs NVIDIA driver >= {{floor}}; the fleet runs {{fleet}}',
  release: RELEASE,
  // The same finding as `release`, with a help of its own: before CUDA 11 there is no minor-version floor to name.
  beforeCompat: RELEASE,
  forwardCompat:
    "{{subject}} needs CUDA {{cuda}}; on the fleet's {{fleet}} it runs only through forward compatibility ({{package}} in the image, data-center GPUs only)",
  minor:
    '{{subject}} targets CUDA {{cuda}}, whose full feature set needs driver >= {{needed}}; the fleet runs {{fleet}}, so it runs only under minor-version compatibility',
  requireCuda:
    'NVIDIA_REQUIRE_CUDA ({{value}}) accepts no driver the fleet runs ({{fleet}}): the container runtime will refuse to start',
  requireCudaBrand: "NVIDIA_REQUIRE_CUDA ({{value}}) accepts the fleet's {{fleet}} only on {{brands}} GPUs",
  driverInImage:
    '{{name}} installs NVIDIA driver {{branch}} libraries into the image; they must match the host kernel driver{{fleetNote}}',
  noPool: '{{subject}} needs CUDA {{cuda}}, which no pool of the fleet can run: {{fails}}',
  refused: '{{subject}}: the NVIDIA Container Toolkit refuses to start it on driver {{driver}} ({{condition}})',
  refusedEverywhere:
    '{{subject}}: the NVIDIA Container Toolkit refuses to start it on every pool it may run on, {{pools}} ({{condition}})',
  somePools: '{{subject}} needs CUDA {{cuda}}: it runs on {{runs}}, not on {{fails}}',
  poolsCompat: '{{subject}} targets CUDA {{cuda}}: {{how}}',
  pinned: '{{subject}} needs CUDA {{cuda}}, which no pool it is scheduled on can run: {{fails}}',
  byPython: '{{subject}} installs {{builds}}; {{unknown}}, and {{fails}}',
  byPythonNone: '{{subject}} installs {{builds}}, and {{neither}} {{fails}}',
  unmatched: '{{workload}} container {{container}}: {{why}}, so it is judged on every pool',
  noDockerfile:
    '{{workload}} container {{container}}: {{path}}, named as the Dockerfile of {{image}}, is not in the repository',
};

export type MessageId = keyof typeof MESSAGES;
