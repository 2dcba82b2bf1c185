#!/usr/bin/env python3
"""Writes tests/route/conversations.jsonl: multi-turn conversations for the conversation-aware
routing test (issue 33). Each opens with a question of one domain (math, history, biology: the
route tests' rule categories) and goes on with 2 to 5 follow-ups that name no domain, so that
each alone would be routed elsewhere ("and in Python?", "why is that?"). Deterministic: the
same file every run.

    /usr/bin/python3 tests/route/make_conversations.py > tests/route/conversations.jsonl
"""
import json
import random

OPENERS = {
    "math": [
        "What is the integral of x squared from 0 to 3?",
        "Can you help me with this algebra problem: 3x + 7 = 22?",
        "How do I compute the integral of sin(x) times x?",
        "Explain the algebra behind completing the square.",
        "Walk me through this integral: e^x over 1 + e^x.",
        "What is a good way to learn linear algebra quickly?",
    ],
    "history": [
        "Why did the Roman Empire fall?",
        "Tell me about the Ming dynasty's navy.",
        "How did the Ottoman Empire rise to power?",
        "What ended the Han dynasty?",
        "Describe daily life in the Byzantine Empire.",
        "Which dynasty built most of the Great Wall we see today?",
    ],
    "biology": [
        "How does an enzyme lower activation energy?",
        "What happens inside a cell during mitosis?",
        "Why does every cell need a membrane?",
        "Explain how enzyme inhibitors work.",
        "What does the mitochondria do for the cell?",
        "How do cell signals travel between neurons?",
    ],
}
FOLLOW_UPS = [
    "And why is that?", "Can you give me another example?", "What about the second part?",
    "Explain it more simply, please.", "And how would I write that in Python?",
    "Is that always true?", "Thanks. One more thing: how long did it take?",
    "Could you summarise that in three bullet points?", "What would change if it were reversed?",
    "Where can I read more about it?", "OK, and what is the most common mistake?",
    "Can you check my reasoning: I think it is the other way round.", "Why?",
    "Give me a short quiz on this.", "What did people think about it at the time?",
    "Make it shorter.", "And the edge cases?", "Is there a simpler way?",
]


def main():
    rng = random.Random(33)
    out = []
    domains = sorted(OPENERS)
    for i in range(60):
        domain = domains[i % len(domains)]
        turns = [rng.choice(OPENERS[domain])]
        turns += rng.sample(FOLLOW_UPS, rng.randint(2, 5))
        out.append({"id": f"c{i:02d}", "domain": domain, "turns": turns})
    for c in out:
        print(json.dumps(c))


if __name__ == "__main__":
    main()
