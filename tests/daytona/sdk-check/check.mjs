// Drives the stand-in Daytona with the official @daytonaio/sdk: every call corral makes
// (create with labels and both allow lists, wait until started, list by labels, upload, a session command
// followed live over the WebSocket with stdout and stderr apart, its exit code, a preview
// URL, the auto-stop interval, stop and start, fork and labels, pause of a VM sandbox and
// its auto-pause and auto-archive intervals, delete). Exits 0 when the SDK is content, 1 otherwise.
// Needs DAYTONA_API_URL and DAYTONA_API_KEY (printed by `daytona-standin`); see README.md.
import { Daytona } from '@daytonaio/sdk'

function check(condition, what) {
  if (!condition) {
    console.error(`FAIL: ${what}`)
    process.exit(1)
  }
  console.log(`ok: ${what}`)
}

const daytona = new Daytona({
  apiKey: process.env.DAYTONA_API_KEY,
  apiUrl: process.env.DAYTONA_API_URL,
  target: 'us',
})

const labels = { 'corral-owner': 'corral', 'corral-lease': 'sdk-check' }
// As corral sends `--network allow:pypi.org,*.github.com,10.0.0.0/8,192.0.2.7`.
const sandbox = await daytona.create(
  { labels, autoStopInterval: 30, networkAllowList: '10.0.0.0/8,192.0.2.7/32', domainAllowList: 'pypi.org,*.github.com' },
  { timeout: 60 },
)
check(sandbox.state === 'started', `create waits until the sandbox is started (${sandbox.id})`)
check(sandbox.networkAllowList === '10.0.0.0/8,192.0.2.7/32' && sandbox.domainAllowList === 'pypi.org,*.github.com',
  'both allow lists are taken and reported back')

let listed = []
for await (const s of daytona.list({ labels })) listed.push(s.id)
check(listed.includes(sandbox.id), 'list by labels finds it')

const home = await sandbox.getUserHomeDir()
check(typeof home === 'string' && home.startsWith('/'), `the user's home folder is ${home}`)
await sandbox.fs.uploadFile(Buffer.from('hello from the sdk\n'), `${home}/check.txt`)

await sandbox.process.createSession('check')
const started = await sandbox.process.executeSessionCommand('check', {
  command: 'cat check.txt; echo to-stderr >&2; sleep 1; printf partial',
  runAsync: true,
})
check(typeof started.cmdId === 'string', 'runAsync answers a command id')
let out = ''
let err = ''
const firstAt = []
const t0 = Date.now()
await sandbox.process.getSessionCommandLogs('check', started.cmdId, (chunk) => {
  firstAt.push(Date.now() - t0)
  out += chunk
}, (chunk) => {
  err += chunk
})
check(out === 'hello from the sdk\npartial\n', `stdout followed live: ${JSON.stringify(out)}`)
check(err === 'to-stderr\n', `stderr kept apart: ${JSON.stringify(err)}`)
check(firstAt[0] < 900, `the first output arrived before the command ended (${firstAt[0]} ms)`)
const command = await sandbox.process.getSessionCommand('check', started.cmdId)
check(command.exitCode === 0, 'the exit code is recorded')
const logs = await sandbox.process.getSessionCommandLogs('check', started.cmdId)
check(logs.stdout === out && logs.stderr === err, 'the logs without follow are split the same way')
const sync = await sandbox.process.executeSessionCommand('check', { command: 'exit 3' })
check(sync.exitCode === 3, 'a synchronous session command reports its exit code')
await sandbox.process.deleteSession('check')

const preview = await sandbox.getPreviewLink(3000)
check(preview.url.includes('3000') && preview.token.length > 0, `preview URL ${preview.url} with a token`)
await sandbox.setAutostopInterval(45)
await sandbox.refreshData()
check(sandbox.autoStopInterval === 45, 'the auto-stop interval is set')

// A session command's exit code says whether `test` holds in the sandbox.
async function holds(sb, test) {
  await sb.process.createSession('holds')
  const r = await sb.process.executeSessionCommand('holds', { command: test })
  await sb.process.deleteSession('holds')
  return r.exitCode === 0
}

await sandbox.stop()
check(sandbox.state === 'stopped', 'stop waits until the sandbox is stopped')
await sandbox.start()
check(sandbox.state === 'started', 'start waits until it is started again')
check(await holds(sandbox, 'test "$(cat check.txt)" = "hello from the sdk"'), 'its files survive stop and start')

const fork = await sandbox.fork({ name: 'sdk-check-fork' })
check(fork.state === 'started' && fork.id !== sandbox.id, `fork waits until the fork ${fork.id} is started`)
check(fork.labels['corral-lease'] === 'sdk-check', 'the fork carries the source\'s labels')
await fork.setLabels({ 'corral-owner': 'corral', 'corral-lease': 'sdk-check-fork' })
await fork.refreshData()
check(fork.labels['corral-lease'] === 'sdk-check-fork', 'setLabels replaces the fork\'s labels')
check(await holds(fork, 'test "$(cat check.txt)" = "hello from the sdk" && echo changed > check.txt'),
  'the fork holds the source\'s files')
check(await holds(sandbox, 'test "$(cat check.txt)" = "hello from the sdk"'), 'a write in the fork is not seen in the source')
await fork.delete()

const vm = await daytona.create({ snapshot: 'daytona-vm-small', labels, autoStopInterval: 0 }, { timeout: 60 })
await vm.setAutoPauseInterval(30)
await vm.setAutoArchiveInterval(60)
await vm.refreshData()
check(vm.autoPauseInterval === 30 && vm.autoArchiveInterval === 60, 'a VM sandbox takes auto-pause and auto-archive intervals')
await vm.pause()
check(vm.state === 'paused', 'pause waits until the VM sandbox is paused')
await vm.start()
check(vm.state === 'started', 'start resumes the paused VM sandbox')
let pauseRefused = false
try {
  await sandbox.pause()
} catch (e) {
  pauseRefused = true
}
check(pauseRefused, 'a container sandbox cannot pause')
await vm.delete()

await sandbox.delete()
listed = []
for await (const s of daytona.list({ labels })) listed.push(s.id)
check(!listed.includes(sandbox.id), 'delete removes it')
console.log('the official SDK works against the stand-in')
