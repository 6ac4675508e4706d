"""Reads the man pages' roff source the way a reader sees it: sections, subsections, the tagged
paragraphs (.TP) with their tags as text, and the .EX example blocks. Only the man(7) macros the
pages use are understood; anything else is a test failure, not a silent skip."""
import re
from dataclasses import dataclass, field

FONT_MACROS = {".B", ".I"}                                  # arguments joined by spaces
ALTERNATING_MACROS = {".BR", ".RB", ".BI", ".IB", ".IR", ".RI"}  # arguments joined without
LAYOUT_MACROS = {".TH", ".SH", ".SS", ".TP", ".PP", ".IP", ".RS", ".RE", ".EX", ".EE", ".br"}
ESCAPES = [("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\(lq", "\u201c"), ("\\(rq", "\u201d"),
           ("\\(oq", "\u2018"), ("\\(cq", "\u2019"), ("\\(en", "\u2013"), ("\\(mu", "\u00d7"),
           ("\\(>=", "\u2265"), ("\\%", ""), ("\\&", ""), ("\\e", "\\")]


def plain(text):
    """Roff text without font changes and with escapes resolved."""
    text = re.sub(r"\\f[BIRP]", "", text)
    for escape, char in ESCAPES:
        text = text.replace(escape, char)
    return text


def macro_args(rest):
    """A macro's arguments: words, or "quoted strings" ("" inside is a quote)."""
    args, i = [], 0
    while i < len(rest):
        if rest[i] == " ":
            i += 1
        elif rest[i] == '"':
            j, word = i + 1, ""
            while j < len(rest):
                if rest[j] == '"' and rest[j + 1:j + 2] == '"':
                    word, j = word + '"', j + 2
                elif rest[j] == '"':
                    break
                else:
                    word, j = word + rest[j], j + 1
            args.append(word)
            i = j + 1
        else:
            j = rest.find(" ", i)
            j = len(rest) if j < 0 else j
            args.append(rest[i:j])
            i = j
    return args


def line_text(line):
    """The text a source line contributes, or None for a layout macro."""
    if not line.startswith("."):
        return plain(line)
    name, _, rest = line.partition(" ")
    if name in FONT_MACROS:
        return plain(" ".join(macro_args(rest)))
    if name in ALTERNATING_MACROS:
        return plain("".join(macro_args(rest)))
    if name in LAYOUT_MACROS or name == ".\\\"":
        return None
    raise AssertionError(f"unexpected macro {name!r} in a man page: {line!r}")


@dataclass
class Section:
    title: str
    lines: list = field(default_factory=list)        # raw source lines
    subsections: dict = field(default_factory=dict)  # title -> Section

    def text(self):
        """All the section's text, subsections included, as one string."""
        out = [t for t in (line_text(l) for l in self.lines if not l.startswith(".EX")) if t]
        out += [f"{s.title}\n{s.text()}" for s in self.subsections.values()]
        return "\n".join(out)

    def tags(self):
        """(tag, body) of each .TP paragraph directly in this section (not its subsections)."""
        result, i = [], 0
        lines = self.lines
        while i < len(lines):
            if lines[i] == ".TP":
                tag = line_text(lines[i + 1])
                body, j = [], i + 2
                while j < len(lines) and lines[j] not in (".TP", ".PP", ".SS", ".SH"):
                    t = line_text(lines[j])
                    if t:
                        body.append(t)
                    j += 1
                result.append((tag, " ".join(body)))
                i = j
            else:
                i += 1
        return result

    def examples(self):
        """The text of each .EX block, subsections included."""
        blocks, current = [], None
        for line in self.lines:
            if line == ".EX":
                current = []
            elif line == ".EE":
                blocks.append("\n".join(current))
                current = None
            elif current is not None:
                current.append(plain(line))
        for sub in self.subsections.values():
            blocks += sub.examples()
        return blocks


def read_page(path):
    """{section title: Section}, each Section holding its .SS subsections."""
    sections, current, sub = {}, None, None
    for raw in open(path, encoding="utf-8").read().splitlines():
        if raw.startswith(".SH "):
            title = " ".join(macro_args(raw[4:]))
            current, sub = Section(title), None
            sections[title] = current
        elif raw.startswith(".SS "):
            title = plain(" ".join(macro_args(raw[4:])))
            sub = Section(title)
            current.subsections[title] = sub
        elif current is not None:
            (sub or current).lines.append(raw)
    return sections


OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")


def tag_options(tag):
    """An option tag ("-o, --output PATH") as {long name: (short name, metavar)}."""
    words = tag.replace(",", " ").split()
    options, short = {}, None
    for i, word in enumerate(words):
        if re.fullmatch(r"-[A-Za-z]", word):
            short = word[1]
        elif word.startswith("--"):
            metavar = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else ""
            options[word[2:]] = (short, metavar)
            short = None
    return options


def help_options(help_text):
    """`COMMAND --help` options as {long name: (short name, metavar)}."""
    options = {}
    for line in help_text.split("options:\n", 1)[1].split("\n\n", 1)[0].splitlines():
        m = re.match(r"\s+(?:-(\w), )?--([\w-]+)(?: (\S+))?(?:\s{2,}|$)", line)
        assert m, f"cannot read option line {line!r}"
        options[m.group(2)] = (m.group(1), m.group(3) or "")
    return options


def sparkguard_invocations(text):
    """(command, [options before --]) for each `sparkguard COMMAND ...` in shell-like text."""
    joined = re.sub(r"\\\n\s*", " ", text)
    calls = []
    for m in re.finditer(r"\bsparkguard (run|plan|preflight|thermal|diagnose|report)\b([^\n;&|']*)", joined):
        options = []
        for word in m.group(2).split():
            if word == "--":
                break
            if word.startswith("-"):
                options.append(word.split("=", 1)[0].rstrip("`\",.:)"))
        calls.append((m.group(1), options))
    return calls
