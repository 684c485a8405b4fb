// Drives the stand-in E2B with the official `e2b` SDK through the calls corral makes for
// pause, resume and fork: create with metadata and a pause-on-timeout lifecycle, a file
// and a command, pause (twice: the second is E2B's 409), the paused state in getInfo and
// in a list filtered by state, resume through connect, and a fork of two whose files are
// their own. Exits 0 when the SDK is content, 1 otherwise.
// Needs E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY (printed by `e2b-standin`); see README.md.
import { Sandbox } from 'e2b'

function check(condition, what) {
  if (!condition) {
    console.error(`FAIL: ${what}`)
    process.exit(1)
  }
  console.log(`ok: ${what}`)
}

const metadata = { 'corral-owner': 'corral', 'corral-lease': 'sdk-check' }
const note = '/home/user/note.txt'
const made = []
try {
  const sandbox = await Sandbox.create('base', {
    metadata,
    timeoutMs: 600_000,
    secure: true,
    lifecycle: { onTimeout: { action: 'pause', keepMemory: false } },
  })
  made.push(sandbox)
  const info = await sandbox.getInfo()
  check(info.state === 'running', `create: sandbox ${sandbox.sandboxId} runs`)
  check(info.lifecycle?.onTimeout === 'pause', 'create: the lifecycle says it pauses at its timeout')

  await sandbox.files.write(note, 'before pause\n')
  // Relative to the user's home: the stand-in's commands run on this machine, in the sandbox's folder.
  const cat = await sandbox.commands.run('cat note.txt')
  check(cat.stdout === 'before pause\n' && cat.exitCode === 0, 'a command reads the file written')

  check((await sandbox.pause()) === true, 'pause: paused')
  check((await sandbox.getInfo()).state === 'paused', 'getInfo says paused')
  const listed = await Sandbox.list({ query: { metadata, state: ['paused'] } }).nextItems()
  check(listed.some((s) => s.sandboxId === sandbox.sandboxId && s.state === 'paused'), 'list by state finds it paused')
  const running = await Sandbox.list({ query: { metadata, state: ['running'] } }).nextItems()
  check(!running.some((s) => s.sandboxId === sandbox.sandboxId), 'list of running ones leaves it out')
  check((await Sandbox.pause(sandbox.sandboxId)) === false, 'pause again: already paused (409)')

  const resumed = await Sandbox.connect(sandbox.sandboxId, { timeoutMs: 600_000 })
  check((await resumed.getInfo()).state === 'running', 'connect resumed it')
  check((await resumed.files.read(note)) === 'before pause\n', 'its files are as they were')

  const forks = await resumed.fork({ count: 2, timeoutMs: 600_000 })
  check(forks.length === 2 && forks.every((f) => f instanceof Sandbox), 'fork: two sandboxes')
  made.push(...forks.filter((f) => f instanceof Sandbox))
  check(new Set(forks.map((f) => f.sandboxId)).size === 2 && !forks.some((f) => f.sandboxId === sandbox.sandboxId),
    'each fork has an ID of its own')
  await forks[0].files.write(note, 'fork 0\n')
  check((await forks[0].files.read(note)) === 'fork 0\n', 'a fork writes its own copy')
  check((await forks[1].files.read(note)) === 'before pause\n', 'the other fork does not see it')
  check((await resumed.files.read(note)) === 'before pause\n', 'nor does the source')
  check((await resumed.getInfo()).state === 'running', 'the source still runs')
} finally {
  for (const s of made) await Sandbox.kill(s.sandboxId).catch(() => {})
}
console.log('all ok')
