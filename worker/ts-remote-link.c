/* ts-remote-link.c — frames over the ssh pipe (ts-remote-link.h). */
#include "ts-remote-link.h"

#include <errno.h>
#include <unistd.h>

gboolean ts_remote_write_all(int fd, const void *data, gsize len)
{
  for (gsize done = 0; done < len;) {
    ssize_t n = write(fd, (const char *)data + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    done += (gsize)n;
  }
  return TRUE;
}

gboolean ts_remote_read_all(int fd, void *data, gsize len)
{
  for (gsize done = 0; done < len;) {
    ssize_t n = read(fd, (char *)data + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    done += (gsize)n;
  }
  return TRUE;
}

gboolean ts_remote_write_frame(int fd, TsRemoteChannel channel, const void *data, gsize len)
{
  g_return_val_if_fail(len <= TS_REMOTE_FRAME_MAX, FALSE);
  TsRemoteFrame f = { .channel = channel, .length = (uint32_t)len };
  return ts_remote_write_all(fd, &f, sizeof f) && (len == 0 || ts_remote_write_all(fd, data, len));
}

gboolean ts_remote_read_frame(int fd, TsRemoteFrame *f, void *buf)
{
  return ts_remote_read_all(fd, f, sizeof *f) && f->length <= TS_REMOTE_FRAME_MAX &&
         ts_remote_read_all(fd, buf, f->length);
}
