#!/usr/bin/env python3
"""Writes labelled.jsonl, the labelled set of the built-in PII recognizers
(src/routing/pii_recognizers.cpp, tests/unit/test_pii_recognizers.cpp).

Each line is {"text", "spans": [{"type", "start", "end"}], "split"}: offsets are UTF-8 byte
offsets, `split` is "generated" (this script's templates, seeded), "heldout" (handwritten.txt,
written by hand before the recognizers were run on it) or "heldout-2" (handwritten_2.txt, a
second batch written after the first measurement, before the recognizers were run on it). Valid numbers are built with their
checksums (Luhn, mod-97) and rules (SSN ranges, NANP area codes); near-misses break exactly one
rule. Run it again to reproduce the file byte for byte: python3 make_labelled.py
"""
import json
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20261127)


def digits(n):
    return "".join(rng.choice("0123456789") for _ in range(n))


# --- checksums ---------------------------------------------------------------------------------
def luhn_ok(number):
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def luhn_complete(prefix, length):
    body = prefix + digits(length - len(prefix) - 1)
    for check in "0123456789":
        if luhn_ok(body + check):
            return body + check
    raise AssertionError


def iban_check(country, bban):
    moved = bban + country + "00"
    value = int("".join(str(int(c, 36)) for c in moved))
    return "%02d" % (98 - value % 97)


def iban_valid(iban):
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


# --- value generators: each returns the value as written -------------------------------------
CARD_PREFIXES = [("4", 16), ("4", 13), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16),
                 ("34", 15), ("37", 15), ("6011", 16), ("65", 16), ("3528", 16), ("36", 14),
                 ("62", 19), ("62", 16)]


def group_card(number, sep):
    n = len(number)
    if n == 15:
        sizes = [4, 6, 5]
    elif n == 14:
        sizes = [4, 6, 4]
    elif n == 13:
        sizes = [4, 4, 5]
    else:
        sizes = [4] * (n // 4) + ([n % 4] if n % 4 else [])
    parts, i = [], 0
    for s in sizes:
        parts.append(number[i:i + s])
        i += s
    return sep.join(parts)


def card(valid=True):
    prefix, length = rng.choice(CARD_PREFIXES)
    number = luhn_complete(prefix, length)
    if not valid:
        last = int(number[-1])
        number = number[:-1] + str((last + rng.randint(1, 9)) % 10)
    return group_card(number, rng.choice(["", " ", "-"]))


def ssn_parts():
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return "%03d" % area, "%02d" % rng.randint(1, 99), "%04d" % rng.randint(1, 9999)


def ssn(valid=True):
    area, group, serial = ssn_parts()
    if not valid:
        which = rng.choice(["000", "666", "9xx", "group", "serial"])
        if which == "000":
            area = "000"
        elif which == "666":
            area = "666"
        elif which == "9xx":
            area = str(rng.randint(900, 999))
        elif which == "group":
            group = "00"
        else:
            serial = "0000"
    sep = rng.choice(["-", "-", " "])
    return sep.join([area, group, serial])


def upper_letters(n):
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(n))


IBAN_BBAN = {  # country: a BBAN generator of the registry's shape
    "DE": lambda: digits(18), "GB": lambda: upper_letters(4) + digits(14),
    "FR": lambda: digits(10) + upper_letters(1) + digits(12), "NL": lambda: upper_letters(4) + digits(10),
    "ES": lambda: digits(20), "IT": lambda: upper_letters(1) + digits(22), "CH": lambda: digits(17),
    "BE": lambda: digits(12), "AT": lambda: digits(16), "PL": lambda: digits(24),
    "SE": lambda: digits(20), "NO": lambda: digits(11), "IE": lambda: upper_letters(4) + digits(14),
    "PT": lambda: digits(21), "DK": lambda: digits(14), "SA": lambda: digits(20),
    "BR": lambda: digits(23) + upper_letters(1) + "1", "MT": lambda: upper_letters(4) + digits(23),
}


def iban(valid=True, spaced=None):
    country = rng.choice(sorted(IBAN_BBAN))
    bban = IBAN_BBAN[country]()
    value = country + iban_check(country, bban) + bban
    assert iban_valid(value)
    if not valid:
        kind = rng.choice(["digit", "length"])
        if kind == "digit":
            i = rng.randrange(4, len(value))
            while True:
                c = rng.choice("0123456789")
                if c != value[i]:
                    break
            value = value[:i] + c + value[i + 1:]
            assert not iban_valid(value)
        else:
            value = value[:-1]
    if spaced is None:
        spaced = rng.random() < 0.5
    if spaced:
        value = " ".join(value[i:i + 4] for i in range(0, len(value), 4))
    return value


def ipv4(valid=True):
    octets = [rng.choice([rng.randint(0, 255), rng.randint(1, 99), rng.randint(100, 255)])
              for _ in range(4)]
    if not valid:
        kind = rng.choice(["big", "three", "five", "zero"])
        if kind == "big":
            octets[rng.randrange(4)] = rng.randint(256, 999)
        elif kind == "three":
            octets = octets[:3]
        elif kind == "five":
            octets.append(rng.randint(0, 255))
        else:
            i = rng.randrange(4)
            return ".".join(("0%d" % o) if j == i else str(o) for j, o in enumerate(octets))
    return ".".join(str(o) for o in octets)


def ipv6(valid=True):
    groups = ["%x" % rng.choice([rng.randint(0, 0xffff), rng.randint(0, 0xff), 0])
              for _ in range(8)]
    groups[0] = rng.choice(["2001", "fe80", "2a00", "2607", "fd12"])
    kind = rng.choice(["full", "compress", "compress", "mapped", "upper", "padded"])
    if kind == "full":
        text = ":".join(groups)
    elif kind == "padded":
        text = ":".join("%04x" % int(g, 16) for g in groups)
    elif kind == "upper":
        text = ":".join(groups).upper()
    elif kind == "mapped":
        text = "::ffff:" + ipv4()
    else:
        i = rng.randint(1, 6)
        j = rng.randint(i + 1, 8)
        text = ":".join(groups[:i]) + "::" + ":".join(groups[j:])
    if not valid:
        bad = rng.choice(["triple", "twice", "nine", "five-hex", "letter"])
        if bad == "triple":
            text = ":".join(groups[:3]) + ":::" + groups[7]
        elif bad == "twice":
            text = groups[0] + "::" + groups[3] + "::" + groups[7]
        elif bad == "nine":
            text = ":".join(groups + ["1"])
        elif bad == "five-hex":
            text = ":".join(groups[:7] + ["1abcd"])
        else:
            text = ":".join(groups[:7] + ["12g4"])
    return text


NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
         "mallory", "oscar", "peggy", "trent", "victor", "walter", "li.wei", "j.smith", "o'neil",
         "anna-maria", "sales", "support", "no-reply", "first.last", "user_42", "x"]
DOMAINS = ["example.com", "example.org", "mail.example.net", "uni-bonn.example.de",
           "example.co.uk", "corp.example.io", "example.travel", "sub.domain.example.fr"]


def email(valid=True):
    local = rng.choice(NAMES)
    if rng.random() < 0.3:
        local += rng.choice(["+tag", "." + rng.choice(NAMES).replace(".", ""), str(rng.randint(1, 99))])
    domain = rng.choice(DOMAINS)
    if not valid:
        kind = rng.choice(["notld", "dots", "trailing", "onechar", "nodomain", "double"])
        if kind == "notld":
            return local + "@" + domain.split(".")[0]
        if kind == "dots":
            return local.replace(".", "") + "..x@" + domain
        if kind == "trailing":
            return local.replace(".", "") + ".@" + domain
        if kind == "onechar":
            return local + "@" + domain.rsplit(".", 1)[0] + ".c"
        if kind == "nodomain":
            return local + "@"
        return local + "@@" + domain
    return local + "@" + domain


AREA = lambda: str(rng.randint(2, 9)) + digits(2)


def phone(valid=True):
    """A phone number as people write it, and its country/format (for the template)."""
    fmt = rng.choice([
        lambda: "(%s) %s-%s" % (AREA(), digits(3), digits(4)),
        lambda: "%s-%s-%s" % (AREA(), digits(3), digits(4)),
        lambda: "%s.%s.%s" % (AREA(), digits(3), digits(4)),
        lambda: "1-%s-%s-%s" % (AREA(), digits(3), digits(4)),
        lambda: "+1 %s %s %s" % (AREA(), digits(3), digits(4)),
        lambda: "+1-%s-%s-%s" % (AREA(), digits(3), digits(4)),
        lambda: "+1%s%s%s" % (AREA(), digits(3), digits(4)),
        lambda: "+44 20 %s %s" % (digits(4), digits(4)),
        lambda: "+44 7%s %s" % (digits(3), digits(6)),
        lambda: "020 %s %s" % (digits(4), digits(4)),
        lambda: "07%s %s" % (digits(3), digits(6)),
        lambda: "+49 30 %s" % digits(rng.randint(6, 8)),
        lambda: "+49 1%s %s" % (digits(2), digits(7)),
        lambda: "030 %s" % digits(rng.randint(6, 8)),
        lambda: "0%s/%s" % (str(rng.randint(2, 9)) + digits(2), digits(7)),
        lambda: "+33 %d %s %s %s %s" % (rng.randint(1, 9), digits(2), digits(2), digits(2), digits(2)),
        lambda: "0%d %s %s %s %s" % (rng.randint(1, 9), digits(2), digits(2), digits(2), digits(2)),
        lambda: "+81 3-%s-%s" % (digits(4), digits(4)),
        lambda: "0%d0-%s-%s" % (rng.choice([7, 8, 9]), digits(4), digits(4)),
        lambda: "+61 2 %s %s" % (digits(4), digits(4)),
        lambda: "04%s %s %s" % (digits(2), digits(3), digits(3)),
        lambda: "+86 13%d %s %s" % (rng.randint(0, 9), digits(4), digits(4)),
        lambda: "+34 9%s %s %s" % (digits(2), digits(3), digits(3)),
        lambda: "+39 06 %s %s" % (digits(4), digits(4)),
        lambda: "+31 20 %s %s" % (digits(3), digits(4)),
        lambda: "+41 44 %s %s %s" % (digits(3), digits(2), digits(2)),
        lambda: "+91 9%s %s" % (digits(4), digits(5)),
        lambda: "+55 11 9%s-%s" % (digits(4), digits(4)),
        lambda: "+%s" % ("4420" + digits(8)),
    ])
    if valid:
        return fmt()
    return rng.choice([
        lambda: "+1 %s %s" % (AREA(), digits(2)),                 # too short for E.164
        lambda: "%s-%s" % (digits(3), digits(4)),                 # local number only
        lambda: "1%s-%s-%s" % (digits(2), digits(3), digits(4)),  # NANP area code 1xx
        lambda: "0%s-%s" % (digits(2), digits(4)),                # national, too few digits
        lambda: "%s%s%s" % (AREA(), digits(3), digits(4)),        # 10 bare digits: an id
    ])()


# --- negatives that look numeric ---------------------------------------------------------------
def negative_value():
    y, m, d = rng.randint(1990, 2030), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice([
        lambda: "%04d-%02d-%02d" % (y, m, d),
        lambda: "%02d.%02d.%04d" % (d, m, y),
        lambda: "%02d/%02d/%04d" % (m, d, y),
        lambda: "%04d-%02d-%02dT%02d:%02d:%02dZ" % (y, m, d, rng.randint(0, 23), rng.randint(0, 59),
                                                    rng.randint(0, 59)),
        lambda: "%02d:%02d:%02d" % (rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)),
        lambda: "$%d,%03d.%02d" % (rng.randint(1, 999), rng.randint(0, 999), rng.randint(0, 99)),
        lambda: "€%d.%02d" % (rng.randint(1, 999), rng.randint(0, 99)),
        lambda: "978-%d-%s-%s-%d" % (rng.randint(0, 9), digits(3), digits(5), rng.randint(0, 9)),
        lambda: "%d.%d.%d" % (rng.randint(0, 20), rng.randint(0, 30), rng.randint(0, 300)),
        lambda: "v%d.%d.%d.%d" % (rng.randint(0, 9), rng.randint(0, 9), rng.randint(0, 9),
                                  rng.randint(0, 9)),
        lambda: "%s-%s-%s-%s-%s" % tuple("".join(rng.choice("0123456789abcdef") for _ in range(n))
                                         for n in (8, 4, 4, 4, 12)),
        lambda: "".join(rng.choice("0123456789abcdef") for _ in range(40)),
        lambda: "ORD-%d-%s" % (y, digits(6)),
        lambda: "#%s" % digits(rng.randint(5, 12)),
        lambda: digits(5),
        lambda: "%d.%04d, %d.%04d" % (rng.randint(0, 89), rng.randint(0, 9999), rng.randint(0, 179),
                                      rng.randint(0, 9999)),
        lambda: "%d,%03d,%03d" % (rng.randint(1, 999), rng.randint(0, 999), rng.randint(0, 999)),
        lambda: "%d%%" % rng.randint(0, 100),
        lambda: "1Z%s%s" % (upper_letters(3), digits(13)),
        lambda: digits(rng.randint(20, 24)),
    ])()


TYPES = {
    "EMAIL_ADDRESS": email, "PHONE_NUMBER": phone, "CREDIT_CARD": card, "US_SSN": ssn,
    "IBAN_CODE": iban, "IP_ADDRESS": lambda valid=True: (ipv4 if rng.random() < 0.5 else ipv6)(valid),
}

PROSE = {
    "EMAIL_ADDRESS": ["Write to {} for access.", "Contact: {}.", "Send the report ({}) today.",
                      "From: Jane <{}>", "her address is {}, I think", "Kontakt: {} – danke!",
                      "邮箱：{}。", "reply-to={} set", "Mail {}; then wait.", "«{}» est mon adresse"],
    "PHONE_NUMBER": ["Call me at {}.", "Phone: {}", "Tel. {} (office)", "reach us on {}, any time",
                     "Rufen Sie {} an.", "電話番号は {} です。", "mobile {}; landline none",
                     "Numéro : {}", "fax {}\nthanks"],
    "CREDIT_CARD": ["My card number is {}.", "Card: {} exp 09/28", "pay with {}, cvv on back",
                    "Kreditkarte {} wurde belastet.", "card={}"],
    "US_SSN": ["SSN: {}", "Her social security number is {}.", "ssn {} on the form",
               "Numéro SSN {} enregistré."],
    "IBAN_CODE": ["IBAN: {}", "Please transfer to {} by Monday.", "Konto {} (Sparkasse)",
                  "iban={}"],
    "IP_ADDRESS": ["Server at {} is down.", "ssh root@{}", "client ip {}, blocked",
                   "Die Adresse {} antwortet nicht.", "[{}]:443", "from {}\nto localhost"],
}
NEG_PROSE = ["Meeting on {} in room 4.", "Version {} is out.", "Ref {}.", "Total {} due.",
             "ID {} — see the ticket.", "Paket {} ist unterwegs.", "订单 {} 已发货。", "code: {}"]


class Builder:
    def __init__(self):
        self.text = ""
        self.spans = []

    def add(self, s):
        self.text += s

    def span(self, kind, value):
        start = len(self.text.encode("utf-8"))
        self.text += value
        self.spans.append({"type": kind, "start": start,
                           "end": start + len(value.encode("utf-8"))})


def fill(builder, template, kind, value):
    before, after = template.split("{}")
    builder.add(before)
    if kind:
        builder.span(kind, value)
    else:
        builder.add(value)
    builder.add(after)


def generated():
    rows = []
    for kind, make in TYPES.items():
        for _ in range(30):
            b = Builder()
            fill(b, rng.choice(PROSE[kind]), kind, make(True))
            rows.append(b)
        for _ in range(14):
            b = Builder()
            fill(b, rng.choice(PROSE[kind]), None, make(False))
            rows.append(b)
    for _ in range(60):
        b = Builder()
        fill(b, rng.choice(NEG_PROSE), None, negative_value())
        rows.append(b)
    for _ in range(40):  # several kinds in one text, across lines
        b = Builder()
        for k in range(rng.randint(2, 4)):
            kind = rng.choice(sorted(TYPES))
            valid = rng.random() < 0.7
            value = TYPES[kind](valid)
            if kind == "IBAN_CODE" and valid:
                value = value.replace(" ", "")
            fill(b, rng.choice(PROSE[kind]), kind if valid else None, value)
            b.add(rng.choice([" ", "\n", " · ", "\n\n", " — "]))
        rows.append(b)
    return rows


MARK = re.compile(r"\[\[([A-Z_]+):(.*?)\]\]")


def handwritten(name):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            line = line.replace("\\n", "\n").replace("\\t", "\t")
            b, pos = Builder(), 0
            for m in MARK.finditer(line):
                b.add(line[pos:m.start()])
                b.span(m.group(1), m.group(2))
                pos = m.end()
            b.add(line[pos:])
            rows.append(b)
    return rows


def main():
    out = os.path.join(HERE, "labelled.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for split, rows in (("generated", generated()), ("heldout", handwritten("handwritten.txt")),
                            ("heldout-2", handwritten("handwritten_2.txt"))):
            for b in rows:
                f.write(json.dumps({"text": b.text, "spans": b.spans, "split": split},
                                   ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
