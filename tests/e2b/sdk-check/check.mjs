// Drives the stand-in E2B with the official `e2b` SDK through the calls corral makes for
// pause, resume and fork: create with metadata and a pause-on-timeout lifecycle, a file
// and a command, pause (twice: the second is E2B's 409), the paused state in getInfo and
// in a list filtered by state, resume through connect, and a fork of two whose files are
// their own; then for a command's input, signals and terminal: sendStdin and closeStdin,
// kill, and a PTY's keys, resize and exit code. Exits 0 when the SDK is content, 1 otherwise.
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

  // Input (what corral's exec-stdin uses): a command started with its stdin open gets what
  // sendStdin sends (SendInput), and the end of it from closeStdin (CloseStdin).
  const reader = await resumed.commands.run('cat', { background: true, stdin: true })
  await resumed.commands.sendStdin(reader.pid, 'one\n')
  await reader.sendStdin(new Uint8Array([0x74, 0x77, 0x6f, 0x0a]))
  await resumed.commands.closeStdin(reader.pid)
  const read = await reader.wait()
  check(read.stdout === 'one\ntwo\n' && read.exitCode === 0, 'stdin: sendStdin reaches cat, closeStdin ends it')
  const late = await resumed.commands.sendStdin(reader.pid, 'x').then(() => null, (e) => e)
  check(late !== null, 'stdin: input to a command that ended is refused')
  // kill: SendSignal(SIGKILL) to a running command.
  const sleeper = await resumed.commands.run('sleep 30', { background: true })
  check((await resumed.commands.kill(sleeper.pid)) === true, 'kill: the running command is killed')
  check((await sleeper.wait().then(() => null, (e) => e)) !== null, 'kill: it ended by its signal')

  // A terminal (exec-tty): its output, a key, a resize (Update) and its own exit code.
  let screen = ''
  const decoder = new TextDecoder()
  const encoder = new TextEncoder()
  const terminal = await resumed.pty.create({ cols: 91, rows: 17, onData: (d) => { screen += decoder.decode(d) } })
  const shown = async (text) => {
    for (let i = 0; i < 100 && !screen.includes(text); ++i) await new Promise((r) => setTimeout(r, 100))
    return screen.includes(text)
  }
  await resumed.pty.sendInput(terminal.pid, encoder.encode('stty size\n'))
  check(await shown('17 91'), 'pty: created at its size')
  await resumed.pty.resize(terminal.pid, { cols: 120, rows: 40 })
  await resumed.pty.sendInput(terminal.pid, encoder.encode('stty size; exit 3\n'))
  check(await shown('40 120'), 'pty: resized')
  const ended = await terminal.wait().then(() => null, (e) => e)
  check(ended?.exitCode === 3, 'pty: the shell exited 3')
} finally {
  for (const s of made) await Sandbox.kill(s.sandboxId).catch(() => {})
}
console.log('all ok')
