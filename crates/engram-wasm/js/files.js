// The file calls the embedded database keeps its file through in Node (and Electron's main
// process): synchronous `node:fs`, because SQLite's reads and writes are synchronous calls.
// A lock file beside the database names its holder as `pid@host`; a holder on this host
// whose process is gone left it behind by crashing, and the next connection takes it over.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const host = os.hostname();

/** The calls engram's file VFS makes, over `node:fs`. */
export const nodeFiles = {
  open(file, create) {
    try {
      return fs.openSync(file, "r+");
    } catch (error) {
      if (error.code !== "ENOENT" || !create) throw error;
      try {
        return fs.openSync(file, "wx+");
      } catch (raced) {
        if (raced.code !== "EEXIST") throw raced;
        return fs.openSync(file, "r+");
      }
    }
  },
  readAt(fd, buffer, offset) {
    return fs.readSync(fd, buffer, 0, buffer.length, offset);
  },
  writeAt(fd, data, offset) {
    for (let done = 0; done < data.length; ) {
      done += fs.writeSync(fd, data, done, data.length - done, offset + done);
    }
  },
  truncate(fd, size) {
    fs.ftruncateSync(fd, size);
  },
  size(fd) {
    return fs.fstatSync(fd).size;
  },
  sync(fd) {
    fs.fsyncSync(fd);
  },
  close(fd) {
    fs.closeSync(fd);
  },
  exists(file) {
    return fs.existsSync(file);
  },
  remove(file) {
    fs.rmSync(file, { force: true });
  },
  createNew(file, contents) {
    try {
      fs.writeFileSync(file, contents, { flag: "wx" });
      return true;
    } catch (error) {
      if (error.code === "EEXIST") return false;
      throw error;
    }
  },
  readText(file) {
    try {
      return fs.readFileSync(file, "utf8");
    } catch (error) {
      if (error.code === "ENOENT") return undefined;
      throw error;
    }
  },
  owner() {
    return `${process.pid}@${host}`;
  },
  ownerAlive(owner) {
    const at = owner.indexOf("@");
    const pid = Number(owner.slice(0, at));
    if (at < 0 || owner.slice(at + 1) !== host || !Number.isInteger(pid) || pid <= 0) return true;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return error.code === "EPERM";
    }
  },
};

/** `options` with a `path` made absolute (its folder created) and the file calls added. */
export function withFiles(options) {
  if (options === null || typeof options !== "object" || typeof options.path !== "string" || options.path === "") {
    return options;
  }
  const file = path.resolve(options.path);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return { ...options, path: file, files: nodeFiles };
}
