// Drives the stand-in Kubernetes API server with the official @kubernetes/client-node: a
// KubeConfig from the file the stand-in writes (server, CA data, token), CoreV1Api
// create / read / list by label / patch / delete of a Pod, a Watch until it is Ready, Exec
// with stdin (ended by the v5 CLOSE), stdout, stderr and the exit status, a
// NetworkPolicy, the agent-sandbox CRDs, and the API's errors as ApiExceptions.
// Exits 0 when the client is content, 1 otherwise. Needs KUBECONFIG (printed by
// `kubernetes-standin`); see README.md.
import { Readable, Writable } from 'node:stream'
import {
  ApiException, CoreV1Api, CustomObjectsApi, Exec, KubeConfig, NetworkingV1Api, Watch,
} from '@kubernetes/client-node'

function check(condition, what) {
  if (!condition) {
    console.error(`FAIL: ${what}`)
    process.exit(1)
  }
  console.log(`ok: ${what}`)
}

async function failsWith(promise, code, what) {
  try {
    await promise
  } catch (e) {
    check(e instanceof ApiException && e.code === code, `${what} (HTTP ${e.code})`)
    return JSON.parse(e.body)
  }
  check(false, `${what}: no error`)
}

const kc = new KubeConfig()
kc.loadFromFile(process.env.KUBECONFIG)
const namespace = kc.getContextObject(kc.getCurrentContext()).namespace
const core = kc.makeApiClient(CoreV1Api)
const net = kc.makeApiClient(NetworkingV1Api)
const custom = kc.makeApiClient(CustomObjectsApi)

const pod = await core.createNamespacedPod({
  namespace,
  body: {
    metadata: { name: 'check', labels: { app: 'check', 'corral-sandbox': 's1' } },
    spec: {
      activeDeadlineSeconds: 3600,
      containers: [{
        name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '256Mi' } },
      }],
    },
  },
})
check(pod.metadata.uid && pod.status.phase === 'Pending', `create: ${pod.metadata.name} ${pod.metadata.uid}`)

// Watch from the creation's resourceVersion until the pod is Ready.
const ready = await new Promise((resolve, reject) => {
  new Watch(kc).watch(`/api/v1/namespaces/${namespace}/pods`,
    { fieldSelector: 'metadata.name=check', resourceVersion: pod.metadata.resourceVersion },
    (type, obj) => {
      const c = (obj.status.conditions || []).find((x) => x.type === 'Ready')
      if (c && c.status === 'True') resolve({ type, obj })
    },
    (err) => reject(err || new Error('the watch ended before the pod was Ready')))
    .then((req) => setTimeout(() => { req.abort(); reject(new Error('not Ready in 60 s')) }, 60000).unref())
})
check(ready.type === 'MODIFIED' && ready.obj.status.phase === 'Running', `watch: Ready on ${ready.obj.spec.nodeName}`)

const read = await core.readNamespacedPod({ name: 'check', namespace })
check(read.status.containerStatuses[0].ready === true && read.status.qosClass === 'Burstable', 'read: container ready, Burstable')
const list = await core.listNamespacedPod({ namespace, labelSelector: 'app=check' })
check(list.items.length === 1 && list.items[0].metadata.name === 'check', 'list by label selector')
const none = await core.listNamespacedPod({ namespace, labelSelector: 'app=other' })
check(none.items.length === 0, 'list by another label: nothing')

// Exec: stdin in, the stream ended by CLOSE; stdout, stderr and the status back.
const collect = () => {
  const chunks = []
  const w = new Writable({ write(c, _e, cb) { chunks.push(c); cb() } })
  w.text = () => Buffer.concat(chunks).toString()
  return w
}
const execute = (command, input) => new Promise((resolve, reject) => {
  const out = collect()
  const err = collect()
  new Exec(kc).exec(namespace, 'check', 'main', command, out, err, input ? Readable.from([Buffer.from(input)]) : null, false,
    (status) => resolve({ status, out: out.text(), err: err.text() })).catch(reject)
})
const echoed = await execute(['sh', '-c', 'cat; echo to-stderr >&2; exit 3'], 'through stdin\n')
check(echoed.out === 'through stdin\n', `exec stdout: ${JSON.stringify(echoed.out)}`)
check(echoed.err === 'to-stderr\n', `exec stderr: ${JSON.stringify(echoed.err)}`)
check(echoed.status.status === 'Failure' && echoed.status.reason === 'NonZeroExitCode' &&
      echoed.status.details.causes[0].reason === 'ExitCode' && echoed.status.details.causes[0].message === '3',
'exec status: NonZeroExitCode, ExitCode 3')
const fine = await execute(['true'])
check(fine.status.status === 'Success', 'exec status: Success')

// activeDeadlineSeconds: lowered, never raised.
const patch = (value) => core.patchNamespacedPod({
  name: 'check', namespace, body: [{ op: 'replace', path: '/spec/activeDeadlineSeconds', value }],
})
const raised = await failsWith(patch(7200), 422, 'patch raising activeDeadlineSeconds is refused')
check(raised.message.includes('must be less than or equal to previous value'), `  ${raised.message}`)
check((await patch(1800)).spec.activeDeadlineSeconds === 1800, 'patch lowering activeDeadlineSeconds')

const missing = await failsWith(core.readNamespacedPod({ name: 'ghost', namespace }), 404, 'read of a missing pod')
check(missing.reason === 'NotFound' && missing.details.kind === 'pods', `  ${missing.message}`)

// A NetworkPolicy denying the sandbox's egress but for one address.
const policy = await net.createNamespacedNetworkPolicy({
  namespace,
  body: {
    metadata: { name: 's1-egress' },
    spec: {
      podSelector: { matchLabels: { 'corral-sandbox': 's1' } },
      policyTypes: ['Egress'],
      egress: [{ to: [{ ipBlock: { cidr: '192.0.2.7/32' } }] }],
    },
  },
})
check(policy.spec.policyTypes[0] === 'Egress', 'network policy created')
const blocked = await execute(['sh', '-c', `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${new URL(kc.getCurrentCluster().server).port}' 2>/dev/null && echo reached || echo unreachable`])
check(blocked.out === 'unreachable\n', 'the policy is enforced on the pod\'s commands')

// agent-sandbox: a warm pool and a claim bound to one of its pods.
const ext = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1', namespace }
await custom.createNamespacedCustomObject({ ...ext, plural: 'sandboxtemplates', body: {
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxTemplate', metadata: { name: 'py' },
  spec: { podTemplate: { spec: { containers: [{ name: 'main', image: 'python:3.12', command: ['sleep', '600'] }] } } },
} })
await custom.createNamespacedCustomObject({ ...ext, plural: 'sandboxwarmpools', body: {
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxWarmPool', metadata: { name: 'pool' },
  spec: { replicas: 1, sandboxTemplateRef: { name: 'py' } },
} })
await custom.createNamespacedCustomObject({ ...ext, plural: 'sandboxclaims', body: {
  apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxClaim', metadata: { name: 'job' },
  spec: { warmPoolRef: { name: 'pool' } },
} })
let claim
for (let i = 0; i < 300; ++i) {
  claim = await custom.getNamespacedCustomObject({ ...ext, plural: 'sandboxclaims', name: 'job' })
  const c = (claim.status?.conditions || []).find((x) => x.type === 'Ready')
  if (c && c.status === 'True') break
  await new Promise((r) => setTimeout(r, 100))
}
const sandbox = await custom.getNamespacedCustomObject({
  group: 'agents.x-k8s.io', version: 'v1beta1', namespace, plural: 'sandboxes', name: claim.status.sandbox.name,
})
const podName = sandbox.metadata.annotations?.['agents.x-k8s.io/pod-name'] ?? sandbox.metadata.name
const bound = await core.readNamespacedPod({ name: podName, namespace })
check(bound.status.phase === 'Running', `claim bound to pod ${podName}`)

await core.deleteNamespacedPod({ name: 'check', namespace, gracePeriodSeconds: 0 })
await failsWith(core.readNamespacedPod({ name: 'check', namespace }), 404, 'deleted')
console.log('client-node is content with the stand-in')
