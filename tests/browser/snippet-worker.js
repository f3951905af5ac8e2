// Runs the README's npm snippet in a dedicated worker (where OPFS persistence lives) and
// reports what it printed; with `check`, opens the snippet's database instead and reports
// how many memories it holds.
self.onmessage = async ({ data }) => {
  const printed = [];
  const log = console.log;
  console.log = (...args) => {
    printed.push(args.join(" "));
    log(...args);
  };
  try {
    if (data.check) {
      const { default: init, createMemory } = await import("/pkg/dist/browser.js");
      await init();
      const memory = await createMemory({ local: true, path: data.check });
      self.postMessage({ count: await memory.count() });
    } else {
      await import("/snippet/readme.mjs");
      self.postMessage({ printed });
    }
  } catch (error) {
    self.postMessage({ code: error.code ?? null, error: String(error.message ?? error) });
  }
};
