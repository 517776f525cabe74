#!/usr/bin/env python3
"""Renders deploy/helm/gpu-doctor the way `helm template` would, for the subset of Helm's
template language that chart uses, so CI can validate the rendered manifests against the
Kubernetes schemas. `helm` itself is in none of the registries this project's CI can reach
(not in Debian 12, not on PyPI), so this stands in for it; anything outside the subset is an
error here, never silently passed through, which keeps the chart inside what is checked.

Supported: text; {{ }} with -/- trimming; `if`/`else`/`end`, `with`/`end`; terms `.`,
`.Values.x.y`, `.Release.Name|Namespace`, `.Chart.Name|Version|AppVersion`,
`.Files.Get "path"`, string and number literals; functions toYaml, nindent, indent, quote,
default; pipelines.

usage: helm_render.py CHART_DIR [--set key.path=value ...] > rendered.yaml
"""

import os
import re
import sys

import yaml

ACTION = re.compile(r"\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.S)


class TemplateError(Exception):
    pass


def tokenize(src):
    """Text and action tokens, with Helm's whitespace trimming applied."""
    out, pos = [], 0
    for m in ACTION.finditer(src):
        text = src[pos:m.start()]
        if m.group(1):
            text = text.rstrip(" \t\r\n")
        out.append(("text", text))
        out.append(("action", m.group(2), bool(m.group(3))))
        pos = m.end()
    out.append(("text", src[pos:]))
    # Right-trim markers eat the whitespace at the start of the following text.
    for i, tok in enumerate(out):
        if tok[0] == "action" and tok[2] and i + 1 < len(out):
            out[i + 1] = ("text", out[i + 1][1].lstrip(" \t\r\n"))
    return out


def parse(tokens, i=0, stop=("end",)):
    """A list of nodes until one of `stop` (returned with the index after it)."""
    nodes = []
    while i < len(tokens):
        tok = tokens[i]
        if tok[0] == "text":
            nodes.append(("text", tok[1]))
            i += 1
            continue
        body = tok[1]
        word = body.split(None, 1)[0] if body else ""
        if body.startswith("/*"):
            i += 1
        elif word in ("if", "with"):
            then, i, ended = parse(tokens, i + 1, ("else", "end"))
            other = []
            if ended == "else":
                other, i, _ = parse(tokens, i, ("end",))
            nodes.append((word, body[len(word):].strip(), then, other))
        elif word in stop:
            return nodes, i + 1, word
        elif word in ("else", "end", "range", "define", "template", "block"):
            raise TemplateError(f"unsupported or misplaced action: {{{{ {body} }}}}")
        else:
            nodes.append(("expr", body))
            i += 1
    if stop != ("__eof__",):
        raise TemplateError(f"missing {{{{ end }}}} (expected one of {stop})")
    return nodes, i, None


def split_pipeline(expr):
    parts, cur, quoted = [], "", False
    for ch in expr:
        if ch == '"':
            quoted = not quoted
        if ch == "|" and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def words(cmd):
    return re.findall(r'"(?:[^"\\]|\\.)*"|\S+', cmd)


class Renderer:
    def __init__(self, chart_dir, values):
        self.dir = chart_dir
        chart = yaml.safe_load(open(os.path.join(chart_dir, "Chart.yaml")))
        self.root = {
            "Values": values,
            "Release": {"Name": "gpu-doctor", "Namespace": "gpu-doctor"},
            "Chart": {
                "Name": chart["name"],
                "Version": chart["version"],
                "AppVersion": chart.get("appVersion", ""),
            },
        }

    def term(self, w, dot, args):
        if w.startswith('"'):
            return bytes(w[1:-1], "utf-8").decode("unicode_escape")
        if re.fullmatch(r"-?\d+", w):
            return int(w)
        if w == ".Files.Get":
            if len(args) != 1:
                raise TemplateError(".Files.Get takes one path")
            path = os.path.join(self.dir, self.term(args[0], dot, []))
            return open(path).read()
        if args:
            raise TemplateError(f"{w} takes no arguments")
        if w == ".":
            return dot
        if w.startswith("."):
            cur = self.root if w.split(".")[1] in ("Values", "Release", "Chart") else dot
            for key in w.split(".")[1:]:
                if not isinstance(cur, dict) or key not in cur:
                    return None
                cur = cur[key]
            return cur
        raise TemplateError(f"unknown term {w}")

    def call(self, cmd, dot, piped=None, has_pipe=False):
        ws = words(cmd)
        head, args = ws[0], ws[1:]
        if head.startswith((".", '"')) or re.fullmatch(r"-?\d+", head):
            if has_pipe:
                raise TemplateError(f"cannot pipe into {head}")
            return self.term(head, dot, args)
        vals = [self.term(a, dot, []) for a in args]
        if has_pipe:
            vals.append(piped)
        if head == "toYaml":
            (v,) = vals
            if v is None:
                return ""
            return yaml.safe_dump(v, default_flow_style=False, sort_keys=True).rstrip("\n")
        if head in ("nindent", "indent"):
            n, s = vals
            pad = " " * int(n)
            body = "\n".join(pad + line if line else line for line in str(s).split("\n"))
            return ("\n" if head == "nindent" else "") + body
        if head == "quote":
            (v,) = vals
            return '"' + to_text(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
        if head == "default":
            d, v = vals
            return v if truthy(v) else d
        raise TemplateError(f"unsupported function {head}")

    def eval(self, expr, dot):
        value, first = None, True
        for part in split_pipeline(expr):
            value = self.call(part, dot, value, has_pipe=not first)
            first = False
        return value

    def render(self, nodes, dot):
        out = []
        for n in nodes:
            if n[0] == "text":
                out.append(n[1])
            elif n[0] == "expr":
                out.append(to_text(self.eval(n[1], dot)))
            elif n[0] == "if":
                branch = n[2] if truthy(self.eval(n[1], dot)) else n[3]
                out.append(self.render(branch, dot))
            elif n[0] == "with":
                v = self.eval(n[1], dot)
                out.append(self.render(n[2], v) if truthy(v) else self.render(n[3], dot))
        return "".join(out)


def truthy(v):
    return not (v is None or v is False or v == 0 or v == "" or v == {} or v == [])


def to_text(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def set_value(values, assignment):
    path, raw = assignment.split("=", 1)
    keys = path.split(".")
    cur = values
    for k in keys[:-1]:
        cur = cur.setdefault(k, {})
    cur[keys[-1]] = yaml.safe_load(raw)


def main(argv):
    chart_dir, rest = argv[1], argv[2:]
    values = yaml.safe_load(open(os.path.join(chart_dir, "values.yaml"))) or {}
    while rest:
        if rest[0] != "--set" or len(rest) < 2:
            raise SystemExit(__doc__)
        set_value(values, rest[1])
        rest = rest[2:]
    r = Renderer(chart_dir, values)
    tdir = os.path.join(chart_dir, "templates")
    docs = []
    for name in sorted(os.listdir(tdir)):
        if not name.endswith((".yaml", ".yml")):
            continue
        src = open(os.path.join(tdir, name)).read()
        try:
            nodes, _, _ = parse(tokenize(src), 0, ("__eof__",))
            text = r.render(nodes, r.root).strip()
        except TemplateError as e:
            raise SystemExit(f"{name}: {e}")
        if text:
            docs.append(f"# Source: gpu-doctor/templates/{name}\n{text}\n")
    sys.stdout.write("---\n".join(docs))


if __name__ == "__main__":
    main(sys.argv)
