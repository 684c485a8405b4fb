// Drives the stand-in Daytona with the official @daytonaio/sdk: every call corral makes
// (create with labels and both allow lists, wait until started, list by labels, upload, a session command
// followed live over the WebSocket with stdout and stderr apart, its exit code, a preview
// URL, the auto-stop interval, delete). Exits 0 when the SDK is content, 1 otherwise.
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

await sandbox.delete()
listed = []
for await (const s of daytona.list({ labels })) listed.push(s.id)
check(!listed.includes(sandbox.id), 'delete removes it')
console.log('the official SDK works against the stand-in')
