/* corral-jail-exec PROGRAM [ARG...]: what bwrap starts in a local jail, handed over as a
 * descriptor (bwrap runs /proc/self/fd/N), so that no file of it need be visible there.
 * It closes every descriptor above stderr, since bwrap passes on what it was given (the
 * user namespace's, its own), then becomes PROGRAM, found on PATH as a shell finds it. A
 * program that cannot be executed exits 127 or 126 with a shell's message, as on every
 * other provider, not with bwrap's "execvp" failure and status 1.
 *
 * Started with no arguments (bwrap never does that) it prints "corral-jail-exec N" and
 * exits 0: the plugin's probe that this is the whole starter, speaking protocol N. 
 *
 * C and, outside sanitized builds, static: it is started once a command, and a static C
 * program is ready in a fraction of the time a shell or a dynamically linked one takes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A shell's PATH when the environment has none. */
static const char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/* Closes every descriptor from 3 up; falls back to one at a time before Linux 5.9. */
static void close_from_3(void) {
  if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0) return;
  long last = sysconf(_SC_OPEN_MAX);
  if (last < 0 || last > (1L << 20)) last = 1L << 20;
  for (long fd = 3; fd < last; ++fd) close((int)fd);
}

/* Says `program: why` on stderr and ends with `status`. */
static int fail(const char* program, const char* why, int status) {
  fprintf(stderr, "%s: %s\n", program, why);
  return status;
}

/* Runs `path` with `argv`; a file the kernel cannot execute by itself (no #! line) is
 * run by /bin/sh, as a shell does. Returns only on failure, with errno set. */
static void run(const char* path, char** argv, int argc) {
  execv(path, argv);
  if (errno != ENOEXEC) return;
  char** shell_argv = calloc((size_t)argc + 2, sizeof *shell_argv);
  if (!shell_argv) return;
  shell_argv[0] = "/bin/sh";
  shell_argv[1] = (char*)path;
  for (int i = 1; i < argc; ++i) shell_argv[i + 1] = argv[i];
  execv("/bin/sh", shell_argv);
  errno = ENOEXEC;
}

int main(int argc, char** argv) {
  close_from_3();
  if (argc < 2) {
    fputs("corral-jail-exec " CORRAL_JAIL_EXEC_PROTOCOL "\n", stdout);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  const char* program = argv[1];
  char** program_argv = argv + 1;
  const int program_argc = argc - 1;
  if (strchr(program, '/')) {
    if (access(program, F_OK) != 0) return fail(program, "No such file or directory", 127);
    run(program, program_argv, program_argc);
    return fail(program, errno == ENOENT ? "No such file or directory" : "Permission denied",
                errno == ENOENT ? 127 : 126);
  }
  const char* path = getenv("PATH");
  if (!path) path = kDefaultPath;
  /* As a shell: the first folder holding an executable file of that name wins; one
   * holding a file that cannot be executed is remembered (126), the search goes on. */
  int denied = 0;
  const size_t name_length = strlen(program);
  for (const char* dir = path;; ) {
    const char* end = strchrnul(dir, ':');
    const size_t dir_length = (size_t)(end - dir);
    char* candidate = malloc(dir_length + name_length + 3);
    if (!candidate) return fail(program, "out of memory", 126);
    if (dir_length == 0) {
      candidate[0] = '.';
      candidate[1] = '\0';
    } else {
      memcpy(candidate, dir, dir_length);
      candidate[dir_length] = '\0';
    }
    strcat(candidate, "/");
    strcat(candidate, program);
    struct stat st;
    if (stat(candidate, &st) == 0 && !S_ISDIR(st.st_mode)) {
      run(candidate, program_argv, program_argc);
      if (errno == EACCES || errno == EPERM) denied = 1;
    }
    free(candidate);
    if (*end == '\0') break;
    dir = end + 1;
  }
  return denied ? fail(program, "Permission denied", 126) : fail(program, "command not found", 127);
}
