/**
 * The workload kinds ML teams run, and where each keeps its containers: one list, here. The parser finds pod specs
 * by shape (any mapping with a `containers` list, as Renovate's Kubernetes manager finds images), so this list names
 * what each kind's own documentation or CRD says, for the fixtures and the README; the few kinds whose container is
 * not in a pod spec (a single `container`, a `trainer`, an `image` object) are read by the shapes below.
 */
export interface WorkloadKind {
  readonly kind: string;
  /** Where its containers are, as its documentation or CRD writes it. */
  readonly containers: string;
  readonly source: string;
}

export const WORKLOAD_KINDS: readonly WorkloadKind[] = [
  { kind: 'Pod', containers: 'spec.containers', source: 'https://kubernetes.io/docs/concepts/workloads/pods/' },
  ...['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job'].map((kind) => ({
    kind,
    containers: 'spec.template.spec.containers',
    source: 'https://kubernetes.io/docs/concepts/workloads/controllers/',
  })),
  {
    kind: 'CronJob',
    containers: 'spec.jobTemplate.spec.template.spec.containers',
    source: 'https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/',
  },
  {
    kind: 'PodTemplate',
    containers: 'template.spec.containers',
    source: 'https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-template-v1/',
  },
  {
    kind: 'JobSet',
    containers: 'spec.replicatedJobs[].template.spec.template.spec.containers',
    source: 'https://jobset.sigs.k8s.io/docs/reference/jobset.v1alpha2/',
  },
  {
    kind: 'LeaderWorkerSet',
    containers: 'spec.leaderWorkerTemplate.{leaderTemplate,workerTemplate}.spec.containers',
    source: 'https://lws.sigs.k8s.io/docs/reference/leaderworkerset.v1/',
  },
  ...['RayCluster', 'RayJob', 'RayService'].map((kind) => ({
    kind,
    containers: '…headGroupSpec.template.spec.containers, …workerGroupSpecs[].template.spec.containers',
    source: 'https://docs.ray.io/en/latest/cluster/kubernetes/user-guides/config.html',
  })),
  ...['PyTorchJob', 'TFJob', 'MPIJob', 'XGBoostJob', 'PaddleJob', 'JAXJob'].map((kind) => ({
    kind,
    containers: 'spec.<framework>ReplicaSpecs.<Master|Worker|…>.template.spec.containers',
    source: 'https://www.kubeflow.org/docs/components/trainer/legacy-v1/',
  })),
  {
    kind: 'TrainJob',
    containers: 'spec.trainer.image with spec.trainer.resourcesPerNode (else its runtime’s template)',
    source: 'https://www.kubeflow.org/docs/components/trainer/user-guides/',
  },
  ...['TrainingRuntime', 'ClusterTrainingRuntime'].map((kind) => ({
    kind,
    containers: 'spec.template.spec.replicatedJobs[].template.spec.template.spec.containers (a JobSet template)',
    source: 'https://www.kubeflow.org/docs/components/trainer/operator-guides/runtime/',
  })),
  {
    kind: 'InferenceService',
    containers:
      'spec.{predictor,transformer,explainer}.containers (a model with runtime and resources takes its runtime’s image)',
    source: 'https://kserve.github.io/website/latest/reference/api/',
  },
  ...['ServingRuntime', 'ClusterServingRuntime'].map((kind) => ({
    kind,
    containers: 'spec.containers',
    source: 'https://kserve.github.io/website/latest/modelserving/servingruntimes/',
  })),
  {
    kind: 'LLMInferenceService',
    containers: 'spec.template.containers (else the runtime’s)',
    source: 'https://kserve.github.io/website/latest/reference/api/',
  },
  {
    kind: 'Service (serving.knative.dev)',
    containers: 'spec.template.spec.containers',
    source: 'https://knative.dev/docs/serving/reference/serving-api/',
  },
  {
    kind: 'Notebook',
    containers: 'spec.template.spec.containers',
    source: 'https://www.kubeflow.org/docs/components/notebooks/',
  },
  ...['Workflow', 'CronWorkflow', 'WorkflowTemplate', 'ClusterWorkflowTemplate'].map((kind) => ({
    kind,
    containers: 'spec.templates[].container, spec.templates[].script (one container each)',
    source: 'https://argo-workflows.readthedocs.io/en/latest/fields/',
  })),
  {
    kind: 'Job (batch.volcano.sh)',
    containers: 'spec.tasks[].template.spec.containers',
    source: 'https://volcano.sh/en/docs/vcjob/',
  },
  {
    kind: 'NIMService',
    containers: 'spec.image.{repository,tag} with spec.resources',
    source: 'https://docs.nvidia.com/nim-operator/latest/service.html',
  },
  ...['ClusterServingRuntime (ome.io)', 'ServingRuntime (ome.io)'].map((kind) => ({
    kind,
    containers: 'spec.{engineConfig,decoderConfig,routerConfig}[.{leader,worker}].runner (one container each)',
    source: 'https://github.com/sgl-project/ome (pkg/apis/ome/v1beta1)',
  })),
  {
    kind: 'DynamoGraphDeployment',
    containers:
      'spec.services.<name>.extraPodSpec.mainContainer with the service’s resources.limits.gpu (v1alpha1); spec.components[].podTemplate.spec.containers',
    source: 'https://github.com/ai-dynamo/dynamo (deploy/operator/api)',
  },
  {
    kind: 'Model (kubeai.org)',
    containers:
      'spec.image with the GPUs of spec.resourceProfile (without spec.image: the engine’s, from KubeAI’s configuration)',
    source: 'https://github.com/substratusai/kubeai (api/k8s/v1/model_types.go)',
  },
  {
    kind: 'SparkApplication',
    containers: 'spec.image (or {driver,executor}.image) with {driver,executor}.gpu',
    source: 'https://www.kubeflow.org/docs/components/spark-operator/user-guide/writing-sparkapplication/',
  },
];

/**
 * The extended resources NVIDIA's device plugins give GPUs by, as a regular expression's source: `nvidia.com/gpu`, its
 * time-sliced or MPS-shared `nvidia.com/gpu.shared`, a MIG profile (`nvidia.com/mig-1g.10gb`), and `nvidia.com/pgpu`,
 * a whole GPU passed through to a Kata or confidential-containers VM by the GPU Operator's sandbox device plugin
 * (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-kata.html); and Volcano's NVIDIA GPU
 * resources: `volcano.sh/vgpu-number` (volcano-vgpu-device-plugin, on NVIDIA GPUs: volcano-sh/volcano
 * pkg/scheduler/plugins/vgpupredicates/vgpuutil/config.go, "virtual GPU card number"; docs/user-guide/
 * how_to_use_volcano_vgpu.md), `volcano.sh/gpu-number` and `volcano.sh/gpu-memory` (its GPU-number and GPU-share
 * plugins, docs/user-guide/how_to_use_gpu_number.md and how_to_use_gpu_sharing.md).
 */
export const GPU_RESOURCE = String.raw`(?:nvidia\.com\/(?:gpu(?:\.shared)?|pgpu|mig-[\w.-]+)|volcano\.sh\/(?:vgpu-number|gpu-number|gpu-memory))`;

/**
 * GPUs asked for by a kind's own name for them, with no NVIDIA resource in the document: KubeAI's Model by a resource
 * profile of NVIDIA GPUs (`resourceProfile: nvidia-gpu-l4:1`; KubeAI's profiles `nvidia-gpu-*` ask for
 * `nvidia.com/gpu`: kubeai.org/concepts/resource-profiles/), and KAITO's Workspace by an Azure VM size of the NC or ND
 * series, whose GPUs are NVIDIA's (learn.microsoft.com/azure/virtual-machines/sizes/overview, "GPU accelerated"),
 * AMD's MI300X size apart, or of the NV series' NVIDIA sizes: NVadsA10 v5 (`Standard_NV36ads_A10_v5`, NVIDIA A10:
 * learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nvadsa10v5-series) and NVv3 (`Standard_NV12s_v3`,
 * Tesla M60), not NVv4 or NVads V710 v5 (AMD).
 */
const GPU_BY_NAME =
  /^[ \t]*(?:resourceProfile[ \t]*:[ \t]*["']?nvidia-[\w.-]+:[ \t]*[1-9]|instanceType[ \t]*:[ \t]*["']?Standard_(?:N[CD](?![\w]*MI\d)\w*|NV\d+ads_A10_v5|NV\d+s_v3)(?!\w))/m;

/**
 * KAITO's preset inference and tuning (a Workspace's or InferenceSet's `preset:`): KAITO gives the preset's pods
 * `nvidia.com/gpu` (or `nvidia.com/mig-<profile>` on a MIG partition) whatever the instance type or node
 * (kaito-project/kaito pkg/workspace/inference/preset_inferences.go), so they ask for NVIDIA GPUs though the document
 * names none: a placeholder SKU (`instanceType: <your-vm-sku>`) or bring-your-own nodes. A document that names an Azure
 * size is judged by it.
 */
const KAITO_PRESET = {
  test: (text: string): boolean =>
    /^apiVersion:[ \t]*["']?kaito\.sh\//m.test(text) &&
    /^kind:[ \t]*["']?(?:Workspace|InferenceSet)["']?[ \t]*$/m.test(text) &&
    /^[ \t]+preset[ \t]*:/m.test(text) &&
    // An Azure size decides (GPU_BY_NAME): NVIDIA's sizes ask for GPUs, AMD's (NVv4, MI300X) for none.
    !/^[ \t]*instanceType[ \t]*:[ \t]*["']?Standard_/m.test(text),
};

export const GPU_BY_KIND_NAME = {
  test: (text: string): boolean => GPU_BY_NAME.test(text) || KAITO_PRESET.test(text),
};

/**
 * A GPU resource as a key (`nvidia.com/gpu: 1`, or in a flow mapping `{nvidia.com/gpu: 1}`); a count of zero asks for
 * none (`nvidia.com/gpu: 0`).
 */
export const GPU_REQUEST_KEY = new RegExp(
  String.raw`^[ \t-]*["']?${GPU_RESOURCE}["']?[ \t]*:(?![ \t]*["']?0+["']?[ \t]*(?:#.*)?$)` +
    // In a flow mapping: `limits: {nvidia.com/gpu: "2"}`.
    String.raw`|[{,][ \t]*["']?${GPU_RESOURCE}["']?[ \t]*:(?![ \t]*["']?0+["']?[ \t]*[,}])`,
  'm',
);

/**
 * What a YAML document must have to be read as a Kubernetes object with workloads: a top-level `apiVersion` and
 * `kind`, and somewhere a container list, a single container or image, or a GPU request (a key of its own line, or
 * of a flow mapping).
 */
export const WORKLOAD_SHAPE = new RegExp(
  String.raw`^[ \t-]*(?:containers|container|script|trainer|runner|mainContainer|image|resourceClaims|${GPU_RESOURCE})[ \t]*:` +
    // A GPU request in a flow mapping (`limits: {nvidia.com/gpu: "2"}`), as an InferenceService's model may write it.
    String.raw`|[{,][ \t]*["']?${GPU_RESOURCE}["']?[ \t]*:`,
  'm',
);

/** A Helm named template's output written at a line's start: an object of its own, or the rest of one. */
export const TOP_LEVEL_INCLUDE = /^\{\{-?\s*(?:include|template)\s+"[^"]+"/m;

/** NVIDIA's DRA driver's device classes (github.com/NVIDIA/k8s-dra-driver-gpu): whole GPUs and MIG devices. */
export const GPU_CLASS = /deviceClassName:[ \t]*["']?(?:gpu|mig)\.nvidia\.com/;

/** A DRA ResourceClaim or ResourceClaimTemplate that asks NVIDIA's driver for GPUs: pods of other files may use it. */
export const GPU_CLAIM_KIND = /^kind:[ \t]*["']?ResourceClaim(?:Template)?["']?[ \t]*$/m;
