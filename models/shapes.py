"""Shape augmentation of the learned default's training rows (issue 19): the same question in the
shapes routers see — wrapped in chat framing, with neutral context before it, long multi-sentence
prompts, and code snippets with a question about them. Every template is category-neutral, so the
head learns to look past the framing; which template a row gets is picked by a hash of its text,
so the output is the same on every machine. TRAIN_* templates build training rows; HELDOUT_*
templates (disjoint wording) build the held-out shape variants that measure the effect.
Standard library only; imported by training-mix.py."""
import hashlib

TRAIN_CHAT = [
    ("Can you help me with this? ", ""),
    ("Explain: ", ""),
    ("Quick question: ", ""),
    ("Please help: ", " Thanks!"),
    ("Hi! ", " Please explain step by step."),
    ("I need help understanding this. ", ""),
    ("", " Keep the answer short."),
    ("Could you answer this for me: ", ""),
    ("Hey, ", " Thanks in advance."),
    ("", " Can you walk me through it?"),
]
TRAIN_CONTEXT = [
    "I'm preparing for a test next week.",
    "My colleague asked me this and I wasn't sure.",
    "I've been reading about this for a while but I'm still confused.",
    "This came up in a discussion yesterday.",
    "I'm new to this topic, so sorry if this is basic.",
    "I searched online but the answers disagree.",
]
TRAIN_LONG_TAIL = [
    "Please explain your reasoning and mention any assumptions you make.",
    "I would appreciate a detailed answer with an example or two.",
    "If there are several possible answers, list them and say which is most likely.",
]
HELDOUT_CHAT = [
    ("I was wondering: ", ""),
    ("Help me out here. ", ""),
    ("", " What do you think?"),
    ("Question for you: ", " Thank you!"),
]
HELDOUT_CONTEXT = [
    "A friend brought this up over dinner.",
    "I'm writing notes for myself and got stuck here.",
    "Not sure where else to ask this.",
]

CODE_SNIPPETS = [
    ("python", "def mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([]))"),
    ("python", "items = [1, 2, 3]\nfor i in range(len(items) + 1):\n    print(items[i])"),
    ("python", "import json\nwith open('data.json') as f:\n    data = json.load(f)\nprint(data['users'][0]['name'])"),
    ("python", "class Node:\n    def __init__(self, value, next=None):\n        self.value = value\n        self.next = next"),
    ("javascript", "const res = await fetch('/api/items');\nconst items = res.json();\nconsole.log(items.length);"),
    ("javascript", "for (var i = 0; i < 3; i++) {\n  setTimeout(() => console.log(i), 100);\n}"),
    ("c", "char *copy(const char *s) {\n  char buf[64];\n  strcpy(buf, s);\n  return buf;\n}"),
    ("c", "int sum(int *a, int n) {\n  int s = 0;\n  for (int i = 0; i <= n; i++) s += a[i];\n  return s;\n}"),
    ("cpp", "std::vector<int> v{3, 1, 2};\nfor (auto it = v.begin(); it != v.end(); ++it)\n  if (*it == 1) v.erase(it);"),
    ("java", "public int find(int[] a, int x) {\n    for (int i = 0; i < a.length; i++)\n        if (a[i] == x) return i;\n    return -1;\n}"),
    ("go", "func worker(ch chan int, wg *sync.WaitGroup) {\n\tfor v := range ch {\n\t\tfmt.Println(v)\n\t}\n\twg.Done()\n}"),
    ("rust", "fn longest(a: &str, b: &str) -> &str {\n    if a.len() > b.len() { a } else { b }\n}"),
    ("sql", "SELECT customer_id, COUNT(*)\nFROM orders\nWHERE created_at > '2024-01-01'\nGROUP BY customer_id\nHAVING COUNT(*) > 5;"),
    ("bash", "for f in *.log; do\n  gzip $f\ndone\nfind . -name '*.gz' -mtime +7 -delete"),
    ("python", "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\nprint(fib(40))"),
    ("typescript", "interface User { id: number; name?: string }\nfunction greet(u: User) {\n  return 'Hello ' + u.name.toUpperCase();\n}"),
    ("python", "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df.groupby('region')['amount'].sum())"),
    ("c", "pthread_mutex_lock(&m);\nif (queue_empty(q)) return NULL;\nitem = queue_pop(q);\npthread_mutex_unlock(&m);"),
]
CODE_QUESTIONS = [
    "Why does this code crash?",
    "What does this code do?",
    "How can I make this faster?",
    "Is there a bug here?",
    "Can you explain this snippet line by line?",
    "How would I write a unit test for this?",
    "What is the time complexity of this?",
    "Why do I get the wrong output from this?",
    "Can you refactor this to be more idiomatic?",
    "Is this thread-safe?",
]


def _hash64(text, salt):
    return int.from_bytes(hashlib.sha256((salt + text).encode()).digest()[:8], "big")


def pick(text, options, salt=""):
    """A deterministic choice among options, by a hash of the text."""
    return options[_hash64(text, salt) % len(options)]


def fraction(text, salt):
    """A deterministic number in [0, 1) from the text."""
    return _hash64(text, salt) / 2.0**64


def variant(text, chat, context, long_tail):
    """One framed variant of text: chat framing, context before it, or a long prompt."""
    kind = pick(text, ["chat", "chat", "context", "long"], "kind:")
    if kind == "chat":
        pre, post = pick(text, chat, "chat:")
        return "chat", f"{pre}{text}{post}"
    if kind == "context":
        return "context", f"{pick(text, context, 'ctx:')} {text}"
    tail = pick(text, long_tail, "tail:") if long_tail else pick(text, chat, "chat:")[1].strip()
    return "long", f"{pick(text, context, 'ctx:')} {text} {tail}".strip()


def train_variant(text):
    return variant(text, TRAIN_CHAT, TRAIN_CONTEXT, TRAIN_LONG_TAIL)


def heldout_variant(text):
    return variant(text, HELDOUT_CHAT, HELDOUT_CONTEXT, None)


def code_rows():
    """Code snippets with a question about them (computer science): every snippet with a
    hash-picked half of the questions, in a fenced block or inline."""
    rows = []
    for lang, code in CODE_SNIPPETS:
        for q in CODE_QUESTIONS:
            key = lang + code + q
            if fraction(key, "code:") >= 0.5:
                continue
            if fraction(key, "fence:") < 0.5:
                text = f"```{lang}\n{code}\n```\n{q}"
            else:
                text = f"{q}\n\n{code}"
            rows.append(text)
    return rows
