"""The stall measures of `scripts/bench-mcp --stalls` and `--wide` (issue 36): see the
docstring of scripts/bench-mcp. Loaded by it; not a command of its own."""

import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PROJECTS = """acme atlas beacon cedar delta ember falcon garnet harbor indigo juniper kestrel
lumen maple nimbus onyx orchid pioneer quartz raven sierra tundra umber vertex willow
yonder zephyr aurora basalt cobalt dune fjord glacier heron iris jasper kelp lotus mesa
nova""".split()
ENTITIES = """payments deploy database cache ci auth frontend api queue search billing
mobile release docs infra monitoring storage network email support analytics backup
scheduler gateway ledger inventory catalog checkout profile session""".split()
ATTRIBUTES = """owner host region timeout provider version port budget schedule retention
replicas endpoint format language limit window policy channel contact threshold quota
runtime bucket cluster zone tier plan framework branch target""".split()
# Attribute words no drift thesaurus knows: a new key made with one is judged by meaning.
RARE = """custodian steward overseer liaison curator guardian arbiter warden marshal
sentinel herald envoy scribe keeper pilot navigator anchor beacon compass lantern
harness ballast rudder keel mast sextant almanac ledgerbook parchment quill vellum
tapestry mosaic lattice trellis pergola arbor grove thicket meadow""".split()
FILLER = """the team keeps it in the main service for now and checks it every week before
the release so nobody forgets what changed when on call""".split()
WIDE_WORD = "service"


def key_of(i):
    block = len(PROJECTS) * len(ENTITIES) * len(ATTRIBUTES)
    p = PROJECTS[i % len(PROJECTS)] + (str(i // block) if i >= block else "")
    e = ENTITIES[(i // len(PROJECTS)) % len(ENTITIES)]
    a = ATTRIBUTES[(i // (len(PROJECTS) * len(ENTITIES))) % len(ATTRIBUTES)]
    return f"{p}:{e}_{a}"


def value_of(i, rng):
    words = [rng.choice(FILLER) for _ in range(8 + rng.randrange(8))]
    # Nine facts in ten hold the wide word.
    if i % 10:
        words.insert(rng.randrange(len(words)), WIDE_WORD)
    return " ".join(words) + f" ref{i}"


def facts(n):
    rng = random.Random(7)
    return [(key_of(i), value_of(i, rng)) for i in range(n)]


def ms(t):
    return (time.perf_counter() - t) * 1000


def p99(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))]


def env_for(ws, model):
    env = dict(os.environ, MEM7_WORKSPACE=ws, MEM7_AGENT="bench")
    if model:
        env.pop("MEM7_EMBED_PROVIDER", None)
        env["MEM7_EMBED_PROVIDER"] = "local"
    else:
        env["MEM7_EMBED_PROVIDER"] = "none"
    return env


def make_workspace(binary, n, model, embed):
    """A workspace of n facts (imported), with every vector cached when `embed`."""
    ws = tempfile.mkdtemp(prefix=f"mem7-stalls-{n}-")
    subprocess.run([binary, "init", ws], check=True, capture_output=True)
    path = ws + ".jsonl"
    with open(path, "w") as f:
        for k, v in facts(n):
            f.write(json.dumps({"key": k, "value": v, "recorded": "2026-01-01T00:00:00Z"}) + "\n")
    subprocess.run([binary, "import", path], env=env_for(ws, False), check=True, capture_output=True)
    os.unlink(path)
    # A workspace that was searched before: its full-text index is built.
    subprocess.run([binary, "search", WIDE_WORD, "--mode", "lexical"], env=env_for(ws, False),
                   check=True, capture_output=True)
    if embed:
        t = time.perf_counter()
        subprocess.run([binary, "embed"], env=env_for(ws, model), check=True, capture_output=True)
        print(f"  (embedded {n} facts' texts in {ms(t) / 1000:.0f} s)", flush=True)
    return ws


def copy_of(ws):
    dst = tempfile.mkdtemp(prefix="mem7-stalls-copy-")
    shutil.rmtree(dst)
    shutil.copytree(ws, dst, symlinks=True)
    return dst


def text_of(res):
    return " ".join(c.text for c in res.content if hasattr(c, "text"))


def is_error(res):
    return bool(getattr(res, "is_error", getattr(res, "isError", False)))


async def call(s, tool, args):
    t = time.perf_counter()
    res = await s.call_tool(tool, args)
    took = ms(t)
    if is_error(res):
        raise SystemExit(f"{tool} failed: {text_of(res)[:300]}")
    return took, res


async def server(binary, ws, model, body):
    params = StdioServerParameters(command=binary, args=["mcp"], env=env_for(ws, model))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)


async def warm_up(s):
    """One untimed call of each tool the measures time."""
    await call(s, "memory_store", {"key": "bench:warm_up", "value": "warm"})
    await call(s, "memory_recall", {"key": key_of(1)})
    await call(s, "memory_search", {"query": "warm up"})


async def fill_stalls(binary, ws, n, count):
    """Plain changes of existing keys while the server's background fill runs."""
    import asyncio

    async def body(s):
        # The first call of a tool costs about 200 ms more (the SDK's first validation of
        # an answer against the tool's schema, at load 13): paid once, untimed.
        await warm_up(s)
        # Let the fill get going (the model loaded, the first texts embedded).
        await asyncio.sleep(2)
        times = []
        for i in range(count):
            took, _ = await call(s, "memory_store", {"key": key_of((i * 7919) % n), "value": f"changed {i} zz{i}"})
            times.append(took)
            await asyncio.sleep(0.01)
        return times

    return await server(binary, ws, True, body)


async def new_keys(binary, ws, n):
    """Stores of new keys that share their entity's words with existing keys."""
    rng = random.Random(11)

    async def body(s):
        await warm_up(s)
        times, plain, named = [], [], 0
        for i in range(100):
            base = key_of(rng.randrange(n))
            project, rest = base.split(":")
            entity = rest.split("_")[0]
            key = f"{project}:{entity}_{rng.choice(RARE)}_{i}" if i % 2 else f"{project}:{entity}_{rng.choice(RARE)}"
            took, res = await call(s, "memory_store", {"key": key, "value": f"new slot {i}"})
            times.append(took)
            # A plain change of an existing key beside it: the same machine's baseline.
            plain.append((await call(s, "memory_store", {"key": base, "value": f"changed {i}"}))[0])
            named += bool((getattr(res, "structured_content", None) or getattr(res, "structuredContent", None) or {}).get("similar"))
        return times, plain, named

    return await server(binary, ws, True, body)


async def first_search(binary, ws, n, model):
    """A warm search against the first one after 100 stores (at once, and after a pause)."""
    import asyncio

    async def body(s):
        q = {"query": "release schedule for the payments team"}
        for _ in range(3):
            await call(s, "memory_search", q)
        warm = [(await call(s, "memory_search", q))[0] for _ in range(20)]
        firsts, paused = [], []
        for r in range(10):
            for i in range(100):
                await call(s, "memory_store", {"key": f"burst{r}:fact{i}", "value": f"burst value {r} {i}"})
            # Every other burst, the agent thinks for half a second before it searches.
            if r % 2:
                await asyncio.sleep(0.5)
                paused.append((await call(s, "memory_search", q))[0])
            else:
                firsts.append((await call(s, "memory_search", q))[0])
        return warm, firsts, paused

    return await server(binary, ws, model, body)


async def stalls(a):
    for n in a.stalls:
        print(f"== {n} facts", flush=True)
        # Kept between runs (the fill by `mem7 embed` takes minutes): the same facts.
        cache = os.path.join(tempfile.gettempdir(), "mem7-stalls-cache")
        os.makedirs(cache, exist_ok=True)
        bare = os.path.join(cache, f"{n}-bare")
        if not os.path.exists(bare):
            shutil.move(make_workspace(a.binaries[0], n, True, embed=False), bare)
        filled = None
        skip = a.skip.split(",")
        if "newkey" not in skip or "first" not in skip:
            filled = os.path.join(cache, f"{n}-filled")
            if not os.path.exists(filled):
                tmp = copy_of(bare)
                t = time.perf_counter()
                subprocess.run([a.binaries[0], "embed"], env=env_for(tmp, True), check=True, capture_output=True)
                print(f"  (every vector cached by `mem7 embed` in {ms(t) / 1000:.0f} s)", flush=True)
                shutil.move(tmp, filled)
        res = {b: {} for b in a.binaries}
        for rnd in range(a.rounds):
            for b in a.binaries:
                r = res[b]
                if "fill" not in skip:
                    ws = copy_of(bare)
                    times = await fill_stalls(b, ws, n, a.fill_stores)
                    shutil.rmtree(ws)
                    r.setdefault("fill", []).append(times)
                    print(f"  round {rnd + 1} {b}: store during fill median {statistics.median(times):.1f} ms, "
                          f"p99 {p99(times):.1f}, max {max(times):.1f}, over 100 ms {sum(t > 100 for t in times)}/{len(times)}", flush=True)
                if "newkey" not in skip:
                    ws = copy_of(filled)
                    times, plain, named = await new_keys(b, ws, n)
                    shutil.rmtree(ws)
                    r.setdefault("newkey", []).append(times)
                    r.setdefault("plain", []).append(plain)
                    print(f"  round {rnd + 1} {b}: new key sharing words median {statistics.median(times):.1f} ms, "
                          f"p99 {p99(times):.1f}, max {max(times):.1f} ({named}/100 named a look-alike); "
                          f"plain changes beside them median {statistics.median(plain):.1f} ms", flush=True)
                if "first" not in skip:
                    ws = copy_of(filled)
                    warm, firsts, paused = await first_search(b, ws, n, True)
                    shutil.rmtree(ws)
                    r.setdefault("first", []).append((warm, firsts, paused))
                    w, f, pz = statistics.median(warm), statistics.median(firsts), statistics.median(paused)
                    print(f"  round {rnd + 1} {b}: warm search {w:.1f} ms, first after 100 stores at once {f:.1f} ms "
                          f"({f / w:.2f}x; each: {', '.join(f'{x:.0f}' for x in firsts)}), after a 0.5 s pause {pz:.1f} ms "
                          f"({pz / w:.2f}x)", flush=True)
        for b, r in res.items():
            parts = []
            if "fill" in r:
                all_ = [t for ts in r["fill"] for t in ts]
                parts.append(f"store during fill median {statistics.median(all_):.1f} p99 {p99(all_):.1f} max {max(all_):.1f} ms")
            if "newkey" in r:
                all_ = [t for ts in r["newkey"] for t in ts]
                base = [t for ts in r["plain"] for t in ts]
                parts.append(f"new key median {statistics.median(all_):.1f} p99 {p99(all_):.1f} ms "
                             f"(plain changes beside them {statistics.median(base):.1f} ms)")
            if "first" in r:
                w = statistics.median([t for x in r["first"] for t in x[0]])
                f = statistics.median([t for x in r["first"] for t in x[1]])
                pz = statistics.median([t for x in r["first"] for t in x[2]])
                parts.append(f"first search after 100 stores at once {f:.1f} / warm {w:.1f} ms = {f / w:.2f}x, "
                             f"after a 0.5 s pause {pz:.1f} ms = {pz / w:.2f}x")
            print(f"{n} facts, {a.rounds} round(s), {b}: " + "; ".join(parts), flush=True)


def reference_server(dir_):
    main = os.path.join(dir_, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
    if not os.path.exists(main):
        os.makedirs(dir_, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "@modelcontextprotocol/server-memory"], cwd=dir_, check=True)
    return main


async def wide(a):
    ref = reference_server(a.reference_dir)
    for n in a.wide:
        fs = facts(n)
        held = sum(WIDE_WORD in v for _, v in fs)
        print(f"== {n} facts, query `{WIDE_WORD}` (held by {held})", flush=True)
        mem = tempfile.mkdtemp(prefix="mem7-ref-")
        path = os.path.join(mem, "memory.jsonl")
        with open(path, "w") as f:
            for k, v in fs:
                f.write(json.dumps({"type": "entity", "name": k, "entityType": "fact", "observations": [v]}) + "\n")
        params = StdioServerParameters(command="node", args=[ref], env=dict(os.environ, MEMORY_FILE_PATH=path))
        res = {}

        async def ref_body(s):
            for _ in range(3):
                await call(s, "search_nodes", {"query": WIDE_WORD})
            return [(await call(s, "search_nodes", {"query": WIDE_WORD}))[0] for _ in range(30)]

        async def mem_body(s):
            for _ in range(3):
                await call(s, "memory_search", {"query": WIDE_WORD})
            return [(await call(s, "memory_search", {"query": WIDE_WORD}))[0] for _ in range(30)]

        # The stall measures' workspaces when they were made (the same facts; embedding
        # 10k facts takes minutes).
        cache = os.path.join(tempfile.gettempdir(), "mem7-stalls-cache")
        workspaces = {}
        for model in (False, True):
            kept = os.path.join(cache, f"{n}-{'filled' if model else 'bare'}")
            workspaces[model] = copy_of(kept) if os.path.exists(kept) else make_workspace(a.binaries[0], n, model, embed=model)
        for rnd in range(a.rounds):
            with open(os.devnull, "w") as devnull:
                async with stdio_client(params, errlog=devnull) as (r, w):
                    async with ClientSession(r, w) as s:
                        await s.initialize()
                        res.setdefault("reference", []).extend(await ref_body(s))
            for b in a.binaries:
                for model, ws0 in workspaces.items():
                    ws = copy_of(ws0)
                    res.setdefault((b, model), []).extend(await server(b, ws, model, mem_body))
                    shutil.rmtree(ws)
        r = statistics.median(res["reference"])
        print(f"  reference search_nodes median {r:.2f} ms (p99 {p99(res['reference']):.2f})")
        for (b, model), xs in ((k, v) for k, v in res.items() if k != "reference"):
            m = statistics.median(xs)
            print(f"  {b} memory_search ({'local model' if model else 'words only'}) median {m:.2f} ms "
                  f"(p99 {p99(xs):.2f}) = {m / r:.2f}x the reference", flush=True)
        shutil.rmtree(mem)
        for ws in workspaces.values():
            shutil.rmtree(ws)


async def run(a):
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if a.wide:
        await wide(a)
    if a.stalls:
        await stalls(a)
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
