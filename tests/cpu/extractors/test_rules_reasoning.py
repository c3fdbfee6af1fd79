"""rules-3 on reasoning-model output: thought segmentation, commitment, and a reason for every non-answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xfinder_ray import reasoning
from xfinder_ray.extractors import rules
from xfinder_ray.extractors.rules.text import trailing_loop, truncated
from xfinder_ray.extractors.rules_eval import extraction_matches
from xfinder_ray.judging import judge
from xfinder_ray.records import NO_VALID_ANSWER, parse_answer_range, validate

NVA = NO_VALID_ANSWER
MATH = parse_answer_range(None, "math")
LETTERS = parse_answer_range([[chr(65 + i), f"option {i}"] for i in range(10)], "alphabet_option")
YES_NO = parse_answer_range(["Yes", "No"], "categorical_label")
DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data"
REASONING_DEV = DATA / "reasoning_dev" / "reasoning_dev.jsonl"
MC_COT_DEV = DATA / "mc_cot_dev" / "mc_cot_dev.jsonl"
THINK_DEV = DATA / "think_dev" / "think_dev.jsonl"
REAL_SETS = [REASONING_DEV, MC_COT_DEV, THINK_DEV]
REAL_SET_IDS = ["reasoning_dev", "mc_cot_dev", "think_dev"]

RUNNERS = "Anna ran 10 km in 5 h, Bella 12 km in 6 h, Carla 18 km in 5 h. Which runner has the greatest average speed?"
LOOP_MC = "Thinking. " + "The answer is (A). The answer is (C). The answer is (E). " * 6 + "The answer is"

CASES = [
    # (type, question, response, answer, reason)
    (
        "math",
        "How many?",
        "<think>3+4 = 7. So far we have 7. Then 7*2 = 14. Hmm, wait, maybe",
        NVA,
        "truncated",
    ),
    ("math", "How many?", "3+4=7. Then 7*2=14.\n</think>\n\nThe answer is \\boxed{14}.", "14", ""),
    ("math", "How many?", "<think>So the answer is 14.\n</think>\n\n", "14", ""),
    (
        "math",
        "n?",
        "<|begin_of_thought|>\n\nSo n = 5. Let me verify: 5^2 = 25, and 25 - 3 = 22, which is",
        NVA,
        "truncated",
    ),
    (
        "math",
        "n?",
        "<|begin_of_thought|>\nn = 5.\n<|end_of_thought|>\n<|begin_of_solution|>\nThus $n = \\boxed{5}$.\n<|end_of_solution|>",
        "5",
        "",
    ),
    (
        "math",
        "Which direction?",
        "<think>...</think>\nThe final answer is \\boxed{\\text{east}}.",
        "\\text{east}",
        "",
    ),
    ("math", "Which direction?", "Going 3 km north. So the final answer is east.", "east", ""),
    (
        "math",
        "How many goats and helicopters?",
        "<think>x</think>\nThere are \\boxed{7} goats and \\boxed{4} helicopters.",
        "7, 4",
        "",
    ),
    (
        "math",
        "How many?",
        "<think>x</think>\nSo the answer is \\boxed{9} (or \\boxed{7}, depending on it).",
        NVA,
        "hedged",
    ),
    (
        "math",
        "How far in km?",
        "<think>x</think>\nIt is \\boxed{5\\text{ km}} or \\boxed{5000\\text{ m}}.",
        "5",
        "",
    ),
    # ... also for a unit with a slash ("km/h", "m/s")
    (
        "math",
        "What is its speed in km/h?",
        "So it is \\boxed{20 \\text{ m/s}} or \\boxed{72 \\text{ km/h}}.",
        "72",
        "",
    ),
    ("math", "What is its speed in m/s?", "So it is \\boxed{20 m/s} or \\boxed{72 km/h}.", "20", ""),
    ("math", "What is 3/4+1/8?", "First, 3/4 = 0.75 and 1/8 = 0.125. Adding them gives 0.875.", "0.875", ""),
    ("math", "lcm?", "We get " + "= 232792560 " * 40, NVA, "loop"),
    ("math", "Find f.", "Thus\n\\[\n\\boxed{f(t) = 2t + 1}\n\\]", "2t + 1", ""),
    (
        "alphabet_option",
        "Q?",
        "<|channel|>analysis<|message|>B fits.<|end|><|start|>assistant<|channel|>final<|message|>B<|return|>",
        "B",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "a) For the first part, the answer is (C). b) For the second part, the answer is (E).",
        NVA,
        "multi_part",
    ),
    ("alphabet_option", "Q?", LOOP_MC, NVA, "loop"),
    ("alphabet_option", "Q?", "Several apply. The answer is (A, E, I).", NVA, "several"),
    # alternatives in the claim hedge; a list of answers is several
    ("alphabet_option", "Q?", "The answer is either (B) or (G).", NVA, "hedged"),
    ("alphabet_option", "Q?", "The answer is (B) or (G). Option A is out.", NVA, "hedged"),
    ("alphabet_option", "Q?", "The answers are (B) and (G). Or so it seems.", NVA, "several"),
    (
        "alphabet_option",
        "Q?",
        "Profit = 100-50. The answer is (Not an option, but the profit is $50).",
        NVA,
        "out_of_range",
    ),
    ("alphabet_option", "Q?", "It's impossible to answer without that context.", NVA, "refusal"),
    ("alphabet_option", "Q?", "The answer is B. Wait, actually it's C.", "C", ""),
    ("alphabet_option", "Q?", "<think>Hmm, Mars is red so the answer is C. But wait", NVA, "truncated"),
    # an open thought that ends in a loop ran into the cap because of it: the reason is the loop
    ("math", "Q", "<think>\n" + "Let me try again. x = 3? No. " * 200, NVA, "loop"),
    # "either ... or" about what is wrong with the other options hedges nothing; about two options it does.
    (
        "alphabet_option",
        "Q?",
        "The correct answer is (I). Other options are either incorrect or not the main point, e.g. (B), (C).",
        "I",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "The answer is (C). The others, (A) and (B), either misstate the rule or ignore the risk.",
        "C",
        "",
    ),
    ("alphabet_option", "Q?", "The answer is (B), but it is either (B) or (C), hard to say.", NVA, "hedged"),
    # A list's heading is not a claim ("consider each choice:"), and a list of the options cut off at
    # its next item's label commits to nothing; "the options are incorrect" rejects them all, and
    # "I cannot confidently select an answer" after a choice withdraws it.
    (
        "alphabet_option",
        "Q?",
        "Now, consider each choice:\n(A) means X.\n(B) means Y.\n(C) means Z",
        NVA,
        "several",
    ),
    (
        "alphabet_option",
        "Q?",
        "Consider each choice:\n(A) means X.\n(B) means Y.\nThe answer is (B).",
        "B",
        "",
    ),
    ("alphabet_option", "Q?", "A. Foo is wrong.\nB. Bar is wrong.\nC", NVA, "truncated"),
    ("alphabet_option", "Q?", "(A) means X.\n(B) means Y.\n(C)", NVA, "truncated"),
    (
        "alphabet_option",
        "Q?",
        "The answer is (B). But then c = 840. The options are incorrect.",
        NVA,
        "out_of_range",
    ),
    (
        "alphabet_option",
        "Q?",
        "The answer is (B).\nTherefore, I cannot confidently select an answer from the given options.",
        NVA,
        "refusal",
    ),
    # Several options boxed in one statement: several answers, or alternatives when joined by "or";
    # the same option boxed twice, or a later box in its own paragraph, is one answer.
    ("alphabet_option", "Q?", "Both fit: \\boxed{C} and \\boxed{D}", NVA, "several"),
    ("alphabet_option", "Q?", "The answer is \\boxed{C} or \\boxed{D}.", NVA, "hedged"),
    ("alphabet_option", "Q?", "\\boxed{C}\n\nSo the final answer is \\boxed{C}.", "C", ""),
    ("alphabet_option", "Q?", "First \\boxed{B}.\n\nWait, no: the final answer is \\boxed{D}.", "D", ""),
    (
        "alphabet_option",
        "Q?",
        "The roots are \\boxed{C} and \\boxed{D}. The first is repeated, hence the one we seek is \\boxed{C}.",
        "C",
        "",
    ),
    # "we choose (C)" answers like "I choose (C)" when the option ends its sentence; "we choose the
    # position of the cut" or "If we choose a threshold of 6" is a step of the working.
    ("alphabet_option", "Q?", "Both A and C fit. Therefore, we choose (C).", "C", ""),
    ("alphabet_option", "Q?", "Both A and C fit, so we'll go with C.", "C", ""),
    ("alphabet_option", "Q?", "The answer is (B). Then, we choose the position of the cut.", "B", ""),
    ("alphabet_option", "Q?", "The answer is (B). If we choose a threshold of 6, group A is small.", "B", ""),
    (
        "alphabet_option",
        "Q?",
        "The answer is (H).\n\nNow, let's总结以上答案: The answer is H. The answer is J. The answer is B.",
        "H",
        "",
    ),
    ("categorical_label", "Is it?", "<think>The sky is blue, so yes.</think>\nYes.", "Yes", ""),
    ("categorical_label", "Is it?", "Yes and no. It depends on the context.", NVA, "hedged"),
    (
        "math",
        "Find the ODE.",
        "Setting up the model we obtain the equation\n\ndx/dt = kx - a",
        "dx/dt = kx - a",
        "",
    ),
    # A display equation that ends the response, its delimiters dropped.
    (
        "math",
        "Q",
        "So the differential equation is\n\\[ \\frac{dx}{dt} = kx - a \\]",
        "\\frac{dx}{dt} = kx - a",
        "",
    ),
    # An equation named and displayed, the question asking for one: the working after it explains it
    # (SkyThought's Sky-T1 on Minerva-Math).
    (
        "math",
        "Formulate the state-determined equation of motion for the velocity.",
        "Thus, the complete equation of motion is:\n\n\\[\n\\dot{v} = -\\frac{b}{m} v + \\frac{1}{m} f\n\\]\n\n"
        "In state-space form:\n\n\\[\nA = -\\frac{b}{m}, \\quad B = \\frac{1}{m}, \\quad D = 0\n\\]\n\n"
        "This is the required equation.",
        "\\dot{v} = -\\frac{b}{m} v + \\frac{1}{m} f",
        "",
    ),
    # A last sentence that names the equation it states answers with the whole equation, not its
    # right-hand side; an equation solved for a number is read for the number unless one is asked.
    ("math", "Model the tank.", "Thus the differential equation is dy/dt = -ry + b.", "dy/dt = -ry + b", ""),
    ("math", "Model the tank.", "So the governing equation is: dy/dt = -ry + b", "dy/dt = -ry + b", ""),
    (
        "math",
        "Find the equation of the line through (0, 3) with slope 2.",
        "Thus the equation of the line is y = 2x + 3.",
        "y = 2x + 3",
        "",
    ),
    (
        "math",
        "Find the equation of the circle.",
        "The center is (1,2), radius 3, so the equation is $(x-1)^2 + (y-2)^2 = 9$.",
        "(x-1)^2 + (y-2)^2 = 9",
        "",
    ),
    ("math", "What is x?", "Thus the relation is x = 5.", "5", ""),
    # Stacked conclusion words, and a named symbol before its value.
    (
        "math",
        "Q",
        "So the product of the sums is 120.\n\nSo, in conclusion, the product abc is -120.",
        "-120",
        "",
    ),
    (
        "math",
        "Q",
        "The product of the sums is 120.\n\nIn conclusion, the product $abc$ is $-120$.",
        "-120",
        "",
    ),
    ("math", "Q", "Thus, overall, the value of $x$ is $-7$.", "-7", ""),
    # Several requested quantities as assignments: their values in order; one name twice stays whole.
    (
        "math",
        "Find T(10), T(11), T(12).",
        "The final answer is: $T(10) = 1, T(11) = 2, T(12) = 2$.",
        "1, 2, 2",
        "",
    ),
    ("math", "Solve x^2 = 16.", "The answer is x = 4 and x = -4.", "x = 4 and x = -4", ""),
    # "<named quantity> is <value>": as the final statement even when the name holds numbers; mid-way
    # through a chain only when the name is a symbol (SkyThought Sky-T1 outputs).
    (
        "math",
        "Q",
        "So there are 9 of them: 1, 2, 4, 7, 14, 28, 49, 98, 196.\n\n"
        "Therefore, the number of positive whole-number divisors of 196 is 9.\n\nI think that's the answer.",
        "9",
        "",
    ),
    (
        "math",
        "Q",
        "Therefore, the least common multiple of 20 and 27 is 540.\n\nNow I need the times of both gears, "
        "which depend on their speeds.\n\nThe first gear completes a full turn every",
        NVA,
        "truncated",
    ),
    # How the answer is presented is not the answer; a display's closing bracket is not part of it;
    # the last line's "<named quantity> is <value>" answers (SkyThought outputs).
    (
        "math",
        "Q",
        "4. **Final Answer**: the expression is:\n   \\[\n   \\boxed{5}\n   \\]\n\n"
        "This follows the original solution, ensuring that the final answer is clearly highlighted.",
        "5",
        "",
    ),
    ("math", "Q", "Therefore the count is:\n\n\\[ 10 - 7 = 3 \\]", "3", ""),
    (
        "math",
        "Q",
        "So r = 2 is right.\n\nThe value of \\( r \\) in the polar form of \\( z = 1 + \\sqrt{3}i \\) is 2.",
        "2",
        "",
    ),
    # A long marker-less chain that deliberates ("Wait, maybe ...") and then states its result as its
    # last sentence committed to it (Sky-T1-27B); an apposition after the value is not the value.
    (
        "math",
        "Q",
        "Therefore, the last nonzero digit is 4.\n\nWait a minute, maybe I should check 137/500 = 0.274 "
        "or perhaps 0.27.\n\nYes, 0.274.\n\nThe last nonzero digit to the right of the decimal point is 4.",
        "4",
        "",
    ),
    (
        "math",
        "Q",
        "9 divided by 2 is 4 with a remainder of 1, or maybe 4.5.\n\n"
        "I think I've confirmed it enough. So, \\(\\frac{9}{2}\\) expressed as a decimal is 4.5.",
        "4.5",
        "",
    ),
    (
        "math",
        "Q",
        "Plug in x = 20.\n\nThe final answer is 7, which is the y-coordinate of the point whose x is 20.",
        "7",
        "",
    ),
    ("math", "Q", "The graph is 5-regular.\n\nSo, for each vertex, there are 5 vertices", NVA, "truncated"),
    # A refusal, then a value only under an assumption: no commitment.
    (
        "math",
        "Q",
        "I cannot solve this problem because the figure is missing. If x were 3, we'd get 9.",
        NVA,
        "refusal",
    ),
    (
        "math",
        "Q",
        "Without more information this cannot be determined. Assuming a = 2, b = 6.",
        NVA,
        "refusal",
    ),
    # An answer the response calls wrong in its own sentence, or a chain that ends saying it cannot
    # get the answer, commits to nothing; a value after the disowned one still answers.
    (
        "math",
        "Q",
        "One might guess \\boxed{7}, but that is wrong; the data do not fix it.",
        NVA,
        "none_found",
    ),
    ("math", "Q", "A first guess would be 7, but this is incorrect.", NVA, "none_found"),
    ("math", "Q", "At first 2 + 2 = 5 seemed right, but that is wrong: 2 + 2 = 4.", "4", ""),
    (
        "math",
        "Q",
        "Let x = 3. Then 2x = 6. But x is not given, so we cannot compute the answer.",
        NVA,
        "refusal",
    ),
    ("math", "Q", "Hmm, 7 seems plausible but I am not confident. I don't know the answer.", NVA, "refusal"),
    (
        "math",
        "Q",
        "The answer is 12. Actually, that's not right, and I'm not able to determine the right one.",
        NVA,
        "refusal",
    ),
    (
        "math",
        "Q",
        "Try 4: 4^2 = 16, too big. Without more data the problem cannot be solved.",
        NVA,
        "refusal",
    ),
    # ... but "we cannot find a value of c that ..." is a step of the working, not a refusal.
    ("math", "Q", "So we cannot find a value of c that satisfies both. Hence d = 3.", "3", ""),
    # A name the question gives is a word answer after an explicit claim; a closed thought's final
    # part that only explains (no claim states a value) yields to the thought's answer it names.
    ("math", RUNNERS, "We compare the speeds: 2, 2 and 3.6.\n\nSo answer: Carla.", "Carla", ""),
    ("math", "Find the fastest runner.", "The speeds: 2, 2, 3.6.\n\nSo answer: Carla.", "2, 2, 3.6", ""),
    (
        "math",
        RUNNERS,
        "<think>\nAnna 2, Bella 2, Carla 3.6. So answer: Carla.\n</think>\n\nCarla has the greatest average "
        "speed, as the ratios show.\n\n- Anna: 10 / 5 = 2\n- Bella: 12 / 6 = 2\n- Carla: 18 / 5 = 3.6",
        "Carla",
        "",
    ),
    (
        "math",
        RUNNERS,
        "<think>\nAnna 2, Bella 2, Carla 3.6. So answer: Carla.\n</think>\n\nThe speeds are 10 / 5 = 2, "
        "12 / 6 = 2 and 18 / 5 = 3.6.",
        "3.6",
        "",
    ),
    # A problem the response invents after its answer, without a header, and starts to solve is not
    # answered by it (a base model's continuation); the actual question restated is not invented.
    (
        "math",
        "Let x, y be positive reals with xy = 4. Find the minimum of x + y.",
        "By AM-GM, x + y >= 2 sqrt(xy) = 4.\n\nTherefore, the minimum value is \\boxed{4}.\n\n"
        "Given the function $f(x) = \\sin 2x$, where $x$ is real.\n1. Find the smallest positive period of f.\n"
        "Let's solve the problem step-by-step.\n\nThe period is \\boxed{\\pi}.",
        "4",
        "",
    ),
    (
        "math",
        "Given the function $f(x) = x^2$, find f(3).",
        "We evaluate at 3.\n\nSo the value is \\boxed{9}.\n\nGiven the function $f(x) = x^2$, find f(3).\n"
        "Let's solve it again step by step: f(3) = 9, so \\boxed{9}.",
        "9",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "For question 1 the answer is (B). For question 2 the answer is (D).",
        NVA,
        "multi_part",
    ),
    # Cut off inside display math, or after the first word.
    ("math", "Q", "Summing all terms:\n\\[\n327,600,000,000,000 + 2,8", NVA, "truncated"),
    ("math", "Q", "$$\n7,811,528 \\times 42,361,604 = 330", NVA, "truncated"),
    ("math", "Q", "To", NVA, "truncated"),
    # ... or after the first word of a new line, before any commitment (MMLU-Pro: Qwen1.5, Yi, gemma)
    ("math", "Q", "Each basket holds 12, so 4 * 12 = 48.\n\nThen", NVA, "truncated"),
    ("math", "Q", "Adding the 7 loose ones: 48 + 7 = 55 apples in total.\n\n**Final", NVA, "truncated"),
    (
        "math",
        "Q",
        "Adding the 7 loose ones: 48 + 7 = 55 apples in total.\n\nThe answer is 55.\n\nThe",
        "55",
        "",
    ),
    ("alphabet_option", "Q?", "Option F matches 21 * 32 = 672.\n\nThe", NVA, "truncated"),
    # A stray "$$" inside a sentence opens nothing (MMLU-Pro, Llama-2-13b).
    ("math", "Q", "This is equal to $$10^{-4.26}$. So the answer is 5.75.", "5.75", ""),
    # Per-part choices inside one claim, and a numbered list of answers without an overall one.
    (
        "alphabet_option",
        "Q?",
        "a) ... b) ...\n\nThe answer is (E) for part a and (B) for part b.",
        NVA,
        "multi_part",
    ),
    ("alphabet_option", "Q?", "So the answer is (G) for part (a) and (A) for part (b).", NVA, "multi_part"),
    # ... the parts' options on lines of their own (Qwen1.5-7B-Chat on MMLU-Pro)
    (
        "alphabet_option",
        "Q?",
        "Final Answer:\nThe answer is:\nA. 2 kHz for part (a) and\nB. 20 kHz for part (b).",
        NVA,
        "multi_part",
    ),
    # A refusal in the answer's place withdraws the answers before it (gemini-1.5-flash on MMLU-Pro)
    (
        "alphabet_option",
        "Q?",
        "The answer is (D)\nThe answer is (H)\nThe answer is (This question requires additional "
        "information or context to solve.)",
        NVA,
        "refusal",
    ),
    ("alphabet_option", "Q?", "Not enough information is given.", NVA, "refusal"),
    (
        "alphabet_option",
        "Q?",
        "The answer is (B). Not enough information is given to rule out (C), but B fits.",
        "B",
        "",
    ),
    # parts numbered in roman numerals, with or without brackets
    (
        "alphabet_option",
        "Q?",
        "Part (i): the answer is (B).\nPart (ii): the answer is (D).",
        NVA,
        "multi_part",
    ),
    ("alphabet_option", "Q?", "Part I: the answer is (B).\nPart II: the answer is (D).", NVA, "multi_part"),
    # "Part Ia" is no part mark of this kind; a part named once is not several parts
    ("alphabet_option", "Q?", "Part I shows the premise. So the answer is (D).", "D", ""),
    # statements of one question weighed in turn (Qwen1.5-72B-Chat on MMLU-Pro): not parts
    (
        "alphabet_option",
        "Q?",
        "Statement I is correct.\n\nStatement II is also correct.\n\nStatement III is not correct.\n\n"
        "So, the correct answer is statements I and II only. The answer is (E).",
        "E",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "1. The answer is (B).\n2. The answer is (D).\n3. The answer is (A).",
        NVA,
        "multi_part",
    ),
    # The few-shot questions' answers listed after the real one, under a heading of their own.
    (
        "alphabet_option",
        "Q?",
        "Cells lack these. The answer is (A).\nNow, let's summarize the final answers to all questions:\n"
        "1. The answer is (B).\n2. The answer is (D).\n3. The answer is (C).",
        "A",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "It matches. The answer is (I).\n== response ==\nThe answers are:\n1. The answer is (H).\n"
        "2. The answer is (J).\n3. The answer is (J).",
        "I",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "Three buying classes. The answer is (J).\nNow I can give the final answer for each question.\n"
        "1. The answer is (F).\n2. The answer is (A).\n3. The answer is (C).",
        "J",
        "",
    ),
    # One line naming another answer under a recap header right after the real answer (Qwen1.5-Chat
    # on MMLU-Pro); a correction or reasoning in between keeps the later answer.
    (
        "alphabet_option",
        "Q?",
        "It is added back. The answer is (B).\n\nFinal Answer: The answer is (E).",
        "B",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "So Q = -250J. The answer is (C).\nNow, combining all the answers:\nThe answer is (B).",
        "C",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "The answer is (D).\nFinal Answer:\nThe answer is (F). Business ethics management.",
        "D",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "The answer is (B). Wait, I made an error: the rate doubles.\nFinal Answer: (D)",
        "D",
        "",
    ),
    (
        "alphabet_option",
        "Q?",
        "The answer is (B).\n\nOn reflection the rate doubles, so it is D.\nFinal Answer: (D)",
        "D",
        "",
    ),
    # An alternating loop whose turns the loop scan starts mid-claim ("). The answer is (A). The answer is (B").
    (
        "alphabet_option",
        "Q?",
        "The answer is (A). " + "The answer is (A). The answer is (B). " * 6,
        NVA,
        "loop",
    ),
    ("alphabet_option", "Q?", "Mayan art. The answer is (E).\n" + "The answer is (A).\n" * 20, "A", ""),
    ("math", "Q", "The", NVA, "truncated"),
    # An offer to do the work the response left undone: the numbers of its steps are not an answer.
    (
        "math",
        "How many ordered pairs?",
        "**1. Factor 50.** 50 = 2 * 5^2.\n\n**2. Count the divisors.** Each pair uses steps 3-7 of the method."
        "\n\nLet me know if you'd like me to work through the detailed calculations.",
        NVA,
        "none_found",
    ),
    (
        "alphabet_option",
        "Q?",
        "Option (C) looks closest, but the numbers need checking.\n\n"
        "Let me know if you'd like me to calculate the exact values.",
        NVA,
        "none_found",
    ),
    (
        "math",
        "Find the sum.",
        "**4. Sum the terms.** The sum runs over t_3 - 64 and the terms after it.\n\n**5. Final Answer**\n\n"
        "Due to the complexity of the summation, it's best to use a computer program to compute the final answer.",
        NVA,
        "none_found",
    ),
    # ... and a value in \\( \\) followed by its unit, or a plain-text power of ten.
    (
        "math",
        "What is the speed of light?",
        "In scientific notation it should be 3 times ten to the eighth.\n\nSo, the speed of light to 1 "
        "significant figure is \\( 3 \\times 10^{8} \\) meters per second.\n\nI think that's the answer.",
        "3 \\times 10^{8}",
        "",
    ),
    (
        "math",
        "What is the de Broglie wavelength of the baseball?",
        "With h = 6.626 x 10^-34 J s and p = 1.45 x 10^-10 kg m/s, we get a tiny value.\n\n"
        "So, in conclusion, the de Broglie wavelength of the baseball is 4.569 x 10^-24 meters.",
        "4.569 x 10^-24",
        "",
    ),
    # Several boxes where the question asks for a number of values ("Compute two other 6-labels"): all.
    (
        "math",
        "Compute two other 6-labels with the same 4-signature as 462135.",
        "Therefore, two other 6-labels with the same 4-signature as 462135 are $\\boxed{241356}$ and "
        "$\\boxed{352146}$.",
        "241356, 352146",
        "",
    ),
    # A letter in inline math is the letter; display math after a claim is a formula, not a letter.
    (
        "alphabet_option",
        "Q?",
        "The cost of each update is proportional to the size of the gradient vector \\( D \\). Therefore, "
        "the overall cost is \\( O(ND) \\).\n\nThe answer is \\( F \\).",
        "F",
        "",
    ),
    # A response that restates its question (a base model copying the prompt) answers nothing: the
    # numbers and boxes in it are the question's (here an earlier subproblem's worked solution).
    (
        "math",
        "Preamble: A star has radius 2 R_sun.\n\nSubproblem 0: What is its area in solar units? "
        "Solution: A = 4 R^2, so the answer is \\boxed{4}.\n\nSubproblem 1: What is its luminosity?",
        "Subproblem 0: What is its area in solar units? Solution: A = 4 R^2, so the answer is \\boxed{4}.",
        NVA,
        "none_found",
    ),
    # ... or leaves it to the reader, or says it cannot be had from what was given (a refusal).
    (
        "math",
        "Find n.",
        "**4. The solution:**\n\nSet up 3n + 4 = 5n - 2 and simplify. After solving the equation, you'll find "
        "the value of 'n'. Remember to express it as a percentage.",
        NVA,
        "none_found",
    ),
    (
        "math",
        "Find f(4).",
        "**3. Relate f(3) to f(4):** We need f(3) = 4 first. Unfortunately, there's no direct way to do this."
        "\n\n**Conclusion:**\n\nWe cannot determine the value of *f(4)* with the information provided.",
        NVA,
        "refusal",
    ),
    (
        "alphabet_option",
        "Q?",
        "Option (E) needs the mass, which is not given. Therefore, we cannot determine the answer with the given "
        "information.",
        NVA,
        "refusal",
    ),
    # ... but a stated answer stands, and an offer to explain work already done defers nothing.
    (
        "math",
        "How many?",
        "We add 5 + 7 = 12.\n\nThe answer is 12.\n\nLet me know if you'd like me to work through another example.",
        "12",
        "",
    ),
    (
        "math",
        "How many?",
        "Apples: 5\nPears: 7\nTotal: 5 + 7 = 12\n\nLet me know if you'd like me to elaborate on any step.",
        "12",
        "",
    ),
    # A final "<named quantity> is <value>." whose value is a tuple in \\( \\), or qualified as approximate.
    (
        "math",
        "Find the point the curve passes through at $t = 2.$",
        "At t = 2, x = 15 and y = -29.\n\nSo, the point is \\((15, -29)\\).\n\nI think that's the final answer.",
        "(15, -29)",
        "",
    ),
    (
        "math",
        "What is the angular resolution?",
        "So, θ = (2.5 x 10^5) * 5 / 85\n\nConverting that to arcseconds gives a bit under 15.\n\n"
        "Therefore, the angular resolution of the telescope at 5 microns is about 14.7 arcseconds.",
        "14.7",
        "",
    ),
    # A coefficient and a variable the question names ("in terms of $k$") is the answer whole; a
    # number and its unit is the number.
    (
        "math",
        "Express $a+b+c+d+e+f$ in terms of $k.$",
        "Adding the coefficients, the sum is $2k$.\n\nThe answer is $\\boxed{2k}$.",
        "2k",
        "",
    ),
    ("math", "Simplify $\\frac{(10r^3)(4r^6)}{8r^4}$.", "So the answer is $\\boxed{5r^5}$.", "5r^5", ""),
    ("math", "How long is the rope, in meters?", "The answer is $\\boxed{12m}$.", "12", ""),
    ("math", "What is the distance $d$ to the wall?", "The answer is $\\boxed{5 m}$.", "5", ""),
]


@pytest.mark.parametrize(("kat", "question", "text", "answer", "reason"), CASES)
def test_reasoning_phenomena(kat, question, text, answer, reason):
    rng = {"math": MATH, "alphabet_option": LETTERS, "categorical_label": YES_NO}[kat]
    e = rules.extract_scored(kat, question, text, rng)
    assert (e.answer, e.reason) == (answer, reason)


def test_long_chain_cut_off_mid_sentence_commits_to_no_weak_claim():
    """A long marker-less chain that stops mid-sentence never reached its result: its weak claims are
    steps. A stated answer still stands, and a short cut-off response keeps its weak claim."""
    steps = "".join(
        f"Step {i}: we expand the term {i} * c and collect it with the rest.\n\n" for i in range(120)
    )
    tail = "From a^2 + b^2 = c^2 and b = 0.7c, we get a^2 + (0.7c)^2 ="
    cut = rules.extract_scored("math", "Find a.", "So, a = sqrt(0.51) * c.\n\n" + steps + tail, MATH)
    assert (cut.answer, cut.reason) == (NVA, "truncated")
    assert rules.extract_scored("math", "Find a.", "The answer is 5.\n\n" + steps + tail, MATH).answer == "5"
    assert rules.extract_scored("math", "Find a.", "So, a = 5.\n\nLet me check: 2a + 3 =", MATH).answer == "5"


def test_weak_claim_long_before_the_end_is_a_step():
    """A weak claim followed by 1,000+ characters of working is a step: the last line's result
    (before a sign-off) is what the response ends on. Near the end, or in a cut-off text, the weak
    claim stays."""
    work = "".join(f"Item {i}: {i} boxes at $2 each is ${2 * i}.\n\n" for i in range(1, 40))
    ending = (
        "Profit: $93 - $15 = $78.\n\nEverything seems to add up correctly. I think that's the right answer."
    )
    text = "So, each set of three cookies costs $1.\n\n" + work + ending
    assert rules.extract_scored("math", "What was their profit?", text, MATH).answer == "78"
    near = "So, each set of three cookies costs $1.\n\nThat is all."
    assert rules.extract_scored("math", "What is the cost?", near, MATH).answer == "1"
    cut = "So, each set of three cookies costs $1.\n\n" + work + "Profit: $93 - $15 ="
    assert rules.extract_scored("math", "What was their profit?", cut, MATH).answer != "78"


TASK_OPTIONS = parse_answer_range(
    [
        [chr(65 + i), f"The {w} of the tasks determines the transfer"]
        for i, w in enumerate(
            "duration time age place number similarity difficulty noise complexity mood".split()
        )
    ],
    "alphabet_option",
)


@pytest.mark.parametrize(
    ("text", "answer", "reason"),
    [
        # several letters in one bracket: no single choice
        (
            "The variables include the similarity of the stimuli, the mood of the individual and the "
            "complexity of the tasks. The answer is (F, J, I).",
            NVA,
            "several",
        ),
        # the few-shot examples' answers recapped after this question's own (Qwen1.5-Chat on MMLU-Pro)
        (
            "So the tax rate is $7.60 per $100. The answer is (E).\n\nNow, let's combine all the answers.\n\nThe answer is (A).",
            "E",
            "",
        ),
        (
            "So N = 400. The answer is (J).\n\nNow, let's combine all the answers:\n\nThe answer is F.",
            "J",
            "",
        ),
        (
            "So the elasticity is 1. The answer is (G).\n\nNow, let's combine all the answers.\n\nThe answer is (A, D, F, G, H, G).",
            "G",
            "",
        ),
        # a header over all the answers opens a recap of any length (option lists, more answers)
        (
            "So the estimate is 190. The answer is (D).\n\nNow, considering all the questions and answers:\n"
            "The answer is A.\nThe answer is H.\nThe answer is E.\nThe answer is I.\nThe answer is B.",
            "D",
            "",
        ),
        (
            "It innervates the pericardium. The answer is (E).\n\nNow, let's summarize all the answers:\n"
            "A. Ventral\nB. Dorsal\nC. Buccal\nJ. Cranial\nThe answer is (J).\n\nA. The third arch\nB. The",
            "E",
            "",
        ),
        # the few-shot format's "Answer:" said again under the real answer (Phi-3-mini on MMLU-Pro);
        # "Answer:" with other words after it is not that recap
        (
            "Hyperthyroidism can cause symptoms similar to anxiety. The answer is (A).\n\n\nAnswer: The answer is (J).\n\n",
            "A",
            "",
        ),
        ("It supports the detector theory. The answer is (E).\n\nAnswer: H", "H", ""),
        # stopped right before the closing parenthesis: the letter is named; a lower-case one is not a letter
        ("So the intensity is half the incident one. The answer is (D", "D", ""),
        ("So the intensity is half the incident one. The answer is (a", NVA, "truncated"),
        # "actually" inside the answer's line ("rather than what is actually observed") is no correction
        (
            "It is based on what is ideal, rather than on what is actually observed. The answer is (G).\n\n"
            "Now, combining all the answers:\nThe answer is (F).",
            "G",
            "",
        ),
        # bare answer sentences naming different letters to the end: no commitment (also cut off, and
        # with letters outside the range)
        (
            "The answer is (B).\n\nThe answer is (H).\n\nThe answer is (E).\n\nThe answer is (I).\n\nThe answer is (B).",
            NVA,
            "loop",
        ),
        (
            "So it challenges security thinking.\n\nThe answer is (A).\nThe answer is (E).\nThe answer is (B).\n"
            "The answer is (J).\nThe answer is (A).\nThe answer is",
            NVA,
            "loop",
        ),
        # one letter restated is an answer; two bare sentences are not yet a run
        ("So it is B.\n\nThe answer is (B).\nThe answer is (B).\nThe answer is (B).", "B", ""),
        ("I first thought A.\nThe answer is (A).\nThe answer is (C).", "C", ""),
        # the option closest to a computed value is a choice, also after "not listed" (MMLU-Pro's
        # Phi-3-mini, Llama-3.1-8B, Qwen1.5); disowned in its line it is none; cut off in its "but"
        # clause it is withdrawn
        ("So 25 C is 298 K. The answer is not in the options, but the closest one is (J).\n\n", "J", ""),
        ("So Z0 = 123.69 + j36.01 ohm. The closest option is D.", "D", ""),
        ("The closest match to 298 K is (J) 300 K.", "J", ""),
        (
            "The answer is not listed in the options provided. However, the closest option is (J), but the "
            "values are not correct.",
            NVA,
            "out_of_range",
        ),
        (
            "None match. The closest option is C, but it is not the correct answer. The question is wrong.",
            NVA,
            "out_of_range",
        ),
        (
            "So it is 5.24 atm.\n\nThe closest option is (H) with 0.800 atm, but since the actual pressure",
            NVA,
            "truncated",
        ),
        # "nearest" as rounding names no option
        ("So 836,527 rounded to the nearest ten thousand is 840,000. The answer is (F).", "F", ""),
        # a relative clause qualifies the noun as "best" does (Qwen1.5-Chat on MMLU-Pro)
        (
            "Whales keep warm with blubber. The option that best represents these adaptations is (E). "
            "Options (A), (C) and (D) are not accurate.",
            "E",
            "",
        ),
        (
            "So (B) or (H). However, the answer that best fits the context is (H), as it suggests a "
            "violation of the commerce clause.",
            "H",
            "",
        ),
        (
            "Determining tax rates is a legislative function. The answer that best captures the central "
            "bank's objective is (G).\n\nNow, let's summarize all the answers:\nThe answer is (F).",
            "G",
            "",
        ),
        # a closest option disowned as far off (gemini-1.5 on MMLU-Pro); "different due to rounding" is not
        (
            "None of the options match 720. The closest is (C), but that's double the correct answer.",
            NVA,
            "out_of_range",
        ),
        ("So 157.58 kJ/kg. The closest answer is (E), but it's quite far off.", NVA, "out_of_range"),
        ("So 2.43. The closest option is (B), but it is different due to rounding.", "B", ""),
        # the options all rejected after the chosen one (Phi-3-mini, Mistral-7B on MMLU-Pro)
        (
            "The closest option is (A), but it has incorrect values. Therefore, none of the options are correct.",
            NVA,
            "out_of_range",
        ),
        (
            "The answer is (H) if the equation is x^2 - 7x + 10 = 0. Since it is not, none of the provided "
            "options are correct.",
            NVA,
            "out_of_range",
        ),
        # ... not when the choice comes after the verdict
        ("None of the options are correct, so I will choose the closest: (D).", "D", ""),
        # the verdict alone, without any option chosen: an answer outside the options
        ("None of the given options is correct.", NVA, "out_of_range"),
        ("None of the options match. The correct value is 17.", NVA, "out_of_range"),
        ("None of the options match the calculated value of 17.", NVA, "out_of_range"),
        # "match" as a step, not the verdict: a later choice stands
        ("We check whether any of the options match 17. Option (B) is 17. The answer is (B).", "B", ""),
        # ... but not across a sentence: "the option that best fits the data" is the task, not a claim
        ("We need the option that best fits the data. It could be (A) or (C).", NVA, "several"),
    ],
)
def test_letter_lists_and_combined_recaps(text, answer, reason):
    e = rules.extract_scored("alphabet_option", "Q?", text, TASK_OPTIONS)
    assert (e.answer, e.reason) == (answer, reason)


def test_none_of_the_above_is_not_rejected_by_its_own_reason():
    options = [["A", "5"], ["B", "6"], ["C", "None of the above"]]
    said = "The answer is (C), because none of the options are correct."
    assert rules.extract("alphabet_option", "Q?", said, options) == "C"
    assert rules.extract("alphabet_option", "Q?", said.replace("(C)", "(B)"), options) == NVA


def test_a_best_fitting_clause_ends_at_its_sentence():
    claimed = rules.extract_scored(
        "alphabet_option", "Q?", "The option that best fits this is (B).", TASK_OPTIONS
    )
    task = rules.extract_scored(
        "alphabet_option", "Q?", "We need the option that best fits. It is (B).", TASK_OPTIONS
    )
    assert (claimed.answer, task.answer) == ("B", "B")
    assert claimed.confidence != "unsure" and task.confidence == "unsure"  # a claim; a bare letter


def test_every_non_answer_has_a_known_reason():
    for kat, question, text, _, _ in CASES:
        rng = {"math": MATH, "alphabet_option": LETTERS, "categorical_label": YES_NO}[kat]
        e = rules.extract_scored(kat, question, text, rng)
        assert (e.answer == NVA) == bool(e.reason)
        assert not e.reason or e.reason in rules.NO_ANSWER_REASONS


def test_open_thought_that_ends_on_a_final_box_still_answers():
    text = "<think>Compute: 2+2 = 4. Checked twice.\n\n**Final Answer**\n\\boxed{4}"
    assert rules.extract("math", "2+2?", text, MATH) == "4"


def test_closed_thought_with_cut_off_final_uses_the_thoughts_last_answer():
    text = "<think>So the answer is 12.</think>\n\nTo solve this, we first note that the number of"
    e = rules.extract_scored("math", "n?", text, MATH)
    assert (e.answer, e.confidence) == ("12", rules.UNSURE)


def test_long_thought_without_markers_cut_off_while_deliberating_commits_to_nothing():
    # The opening <think> was in the prompt and the thought ran into the token cap: no marker at all.
    body = "Okay, let's see. Option C describes the scale factor, and E the density. " * 120
    cut = (
        body
        + "So E is correct.\n\nAlternatively, maybe the answer is C, because the distance was 1/4. But why is C also"
    )
    e = rules.extract_scored("alphabet_option", "Which?", cut, LETTERS)
    assert (e.answer, e.reason) == (NVA, "truncated")
    # The same length, cut off while explaining an answer it does not question: committed.
    kept = body + "So the answer is (E).\n\nThis follows because the density scales with the cube of the"
    assert rules.extract("alphabet_option", "Which?", kept, LETTERS) == "E"
    # Short chat output cut off after "But": not a thought, the answer stands.
    short = "The answer is (E). But the explanation needs the density, which scales with the cube of the"
    assert rules.extract("alphabet_option", "Which?", short, LETTERS) == "E"


def test_segment_families():
    assert reasoning.segment("<think>a</think>b") == reasoning.Segments("a", "b", "closed", "think")
    assert reasoning.segment("a</think>b").state == "closed"  # the opening tag was in the prompt
    assert reasoning.segment("<think>a b c").state == "open"
    assert reasoning.segment("◁think▷a◁/think▷b").final == "b"
    s = reasoning.segment("<reasoning>r</reasoning><answer>42</answer>")
    assert (s.thought, s.final) == ("r", "42")
    assert reasoning.segment("plain text").state == "none"
    assert reasoning.segment("<thinking>a</thinking>b") == reasoning.Segments("a", "b", "closed", "thinking")
    assert reasoning.segment("<seed:think>a</seed:think>b") == reasoning.Segments("a", "b", "closed", "seed")
    assert reasoning.segment("[THINK]a[/THINK]b") == reasoning.Segments("a", "b", "closed", "magistral")
    assert reasoning.segment("\n[THINK]a b c").state == "open"
    assert reasoning.segment("The tag [THINK] in prose.").state == "none"
    assert reasoning.segment("<thought>a</thought>b") == reasoning.Segments("a", "b", "closed", "exaone")
    assert reasoning.segment("<thought>\na b c").state == "open"
    granite = "Here is my thought process:\na\nHere is my response:\nb"
    assert reasoning.segment(granite) == reasoning.Segments("\na\n", "\nb", "closed", "granite")
    assert reasoning.segment("Here is my thought process:\nThe area is").state == "open"
    assert reasoning.segment("So, here is my thought process: a.").state == "none"  # not at the start
    assert reasoning.segment("analysis The user asks. assistantfinal B").final == " B"


def test_trailing_loop_bounds():
    assert trailing_loop("x = 1. " * 100)[0] == 0
    assert trailing_loop("A normal ending sentence, written once.")[0] == -1
    assert trailing_loop("ab" * 50)[0] == -1  # under the minimum length


def test_long_loop_is_fast():
    import time

    text = "Let me recompute the sum. " * 40_000
    t0 = time.perf_counter()
    e = rules.extract_scored("math", "q", text, MATH)
    assert time.perf_counter() - t0 < 2.0
    assert (e.answer, e.reason) == (NVA, "loop")


@pytest.mark.parametrize("path", REAL_SETS, ids=REAL_SET_IDS)
@pytest.mark.parametrize("held_out", [False, True])
def test_real_reasoning_sets_accuracy(path, held_out):
    """Extraction >= 95% and judgment >= 97% on each real set, tuned and held-out models apart."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    rows = [r for r in rows if bool(r.get("held_out")) == held_out]
    right = judged = 0
    for r in rows:
        rec = validate(r)
        got = rules.extract(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
        right += extraction_matches(rec.key_answer_type, rec.answer_range, got, r["gold_key_answer"], judge)
        judged += judge(rec.key_answer_type, rec.answer_range, got, rec.correct_answer) == r["gold_judgment"]
    assert right / len(rows) >= 0.95, right / len(rows)
    assert judged / len(rows) >= 0.97, judged / len(rows)


@pytest.mark.parametrize("path", REAL_SETS, ids=REAL_SET_IDS)
def test_certain_tier_is_precise(path):
    """The router settles `certain` rows without the model: they must be right."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    certain = wrong = 0
    for r in rows:
        rec = validate(r)
        e = rules.extract_scored(rec.key_answer_type, rec.question, rec.llm_output, rec.answer_range)
        if e.confidence == rules.CERTAIN:
            certain += 1
            wrong += not extraction_matches(
                rec.key_answer_type, rec.answer_range, e.answer, r["gold_key_answer"], judge
            )
    assert certain >= 0.3 * len(rows)
    assert wrong <= 0.005 * certain


NUMERIC_OPTIONS = parse_answer_range(
    [
        ["A", "$1830.00"],
        ["B", "3.82 g"],
        ["C", "15.42psia"],
        ["D", " 50.7$\\mathrm{atm}$ "],
        ["E", "$1775.32"],
        ["F", "2.5 V"],
        ["G", "25 V"],
        ["H", "$3.5 \\times 10^3 \\mathrm{J}$"],
        ["I", "3.5 \\times 10^4 \\mathrm{J}"],
        ["J", "$138,889"],
    ],
    "alphabet_option",
)


@pytest.mark.parametrize(
    "text, answer",
    [
        # an option's number and unit, written another way (MMLU-Pro's Llama-3.1-8B, gemini, c4ai)
        ("The face value is $1800. The answer is $1775.32.\n\n", "E"),
        ("Actual yield = 3.83 g (due to rounding, the closest answer is 3.82g)", "B"),
        ("P = 15.412 psi. The closest option is 15.42 psia.", "C"),
        ("$P \\approx 50.68$ atm.\n\nThe closest answer is approximately 50.7 atm.", "D"),
        ("x = $118,182. Thus, the answer is $138,889, which is (J).", "J"),
        # a bare number names the one option that is that number with a unit
        ("So the voltage is 2.5. The answer is 2.5.", "F"),
        # where the number leads two options, or another number follows it, it names none
        ("The answer is 3.5.", NVA),
        ("The answer is $1,700.", NVA),
    ],
)
def test_numeric_values_name_the_option_written_another_way(text, answer):
    assert rules.extract("alphabet_option", "Q?", text, NUMERIC_OPTIONS) == answer


def test_a_named_display_answers_only_where_an_equation_is_asked():
    said = "Using Cardano the equation becomes:\n\\[\nx = y + \\frac{1}{8}\n\\]\nand we go on from there."
    mentioned = rules.extract(
        "math", "The real root of the equation $8x^3 - 1 = 0$ is r. Find $r+1$.", said, MATH
    )
    asked = rules.extract("math", "Find the equation satisfied by x.", said, MATH)
    assert asked == "x = y + \\frac{1}{8}"
    assert mentioned != asked  # a question that only mentions an equation asks for a number


def test_lower_case_letters_in_brackets_are_no_option_mentions():
    """ "(i)", "(a)" in working are labels, roman numerals and symbols; the options are capitals
    (MMLU-Pro: "the i allele (i) is 0.4150", "For (a), we have ..." were read as I and A)."""
    allele = "The frequency of the i allele (i) is 0.4150. So p = 0.2075 + 0.3133 + 0.4150\np = 0.9358\n"
    parts = "For (a), the voltage is 0.6 V. For (b), it is 1.2 V. Summing up the two cases gives 1.8 V."
    for text in (allele, parts):
        assert rules.extract("alphabet_option", "Q?", text, TASK_OPTIONS) == NVA
    said = "Comparing the values, only (I) gives 0.4150 for the i allele."
    assert rules.extract("alphabet_option", "Q?", said, TASK_OPTIONS) == "I"
    # a range whose own letters are lower case is named in lower case
    lower = parse_answer_range([["a", "0.4150"], ["b", "0.9358"], ["c", "0.2075"]], "alphabet_option")
    assert rules.extract("alphabet_option", "Q?", "Summing them up, it must be (b) here.", lower) == "b"


def test_a_loop_that_deliberates_commits_to_nothing():
    """A marker-less thought going round in circles to the token cap (DeepSeek-R1-Distill-Qwen-1.5B on
    MMLU-Pro): the one option it keeps naming, with doubt, is not an answer; a loop of one plain claim is."""
    unit = (
        "I think I've reached the end. The correct answer is likely option G, but I'm not sure. Therefore, "
        "perhaps I'm wrong. But I have to choose.\n\nWait, perhaps I'm wrong. So perhaps the correct answer "
        "is option G, but that's not correct.\n\n"
    )
    deliberating = "Okay, let me think about the passage. " + unit * 30 + unit[:40]  # cut off mid-turn
    e = rules.extract_scored("alphabet_option", "Q?", deliberating, TASK_OPTIONS)
    assert (e.answer, e.reason) == (NVA, "loop")
    plain = "Let me think. " + "The answer is (G).\n" * 60
    assert rules.extract("alphabet_option", "Q?", plain, TASK_OPTIONS) == "G"


def test_degenerate_loops_and_cut_off_brackets():
    """Marker-less thoughts whose opening tag was in the prompt (AdaptThink-7B on MMLU-Pro) that run
    to the token cap: words repeated without a claim, a cut inside a bracket, a cut after a heading."""
    fragment = "So the answer is I. Let me check the statements again. II" + " is option I and II" * 400
    e = rules.extract_scored("alphabet_option", "Q?", fragment, TASK_OPTIONS)
    assert (e.answer, e.reason) == (NVA, "loop")
    boxes = "Thus " + "\\boxed{1} " * 200  # a claim repeated: its one value
    assert rules.extract("math", "Q", boxes, MATH) == "1"
    padded = '{"answer": "366"}\n```' + "</s>" * 300  # end-of-text padding after a whole answer
    assert rules.extract("math", "Q", padded, MATH) == "366"
    bracket = "Okay, let me think about binary search. " * 220 + "Alternatively, perhaps it is option G (100"
    assert rules.extract_scored("alphabet_option", "Q?", bracket, TASK_OPTIONS).reason == "truncated"
    assert truncated("perhaps the intended answer is option G (100") and not truncated("so f(x")
    assert rules.extract("alphabet_option", "Q?", "The answer is (D", TASK_OPTIONS) == "D"
    thought = "Okay, let me think about retributive theory. " * 200 + "Therefore, the answer is A.\n\n"
    cut = thought + "Wait, but the initial options are:\n\n"
    assert rules.extract_scored("alphabet_option", "Q?", cut, TASK_OPTIONS).reason == "truncated"


def test_a_thought_without_markers_cut_off_or_looping_commits_to_nothing():
    """`<think>` in the prompt and no `</think>`: the text is the thought itself (AdaptThink-1.5B on
    MMLU-Pro). Read like one -- its opening, its turns -- it commits to nothing when cut off or looping."""
    turns = "Wait, maybe it is E. Hmm, but the constructor uses it. Wait, let me check J again. "
    thought = "Alright, I need to figure out which variables should be static. " + turns * 3
    looping = thought + "I think the correct answer is J, so I'll go with J. " * 80
    e = rules.extract_scored("alphabet_option", "Q?", looping, TASK_OPTIONS)
    assert (e.answer, e.reason) == (NVA, "loop")
    cut = thought + "So the answer is J. But the count field is shared by every"
    assert rules.extract_scored("alphabet_option", "Q?", cut, TASK_OPTIONS).reason == "truncated"
    # a chat answer that opens the same way but does not turn on itself, or ends whole, still answers
    chat = "Okay, so let's look at each option. The count is shared, so the answer is J. " * 40
    assert rules.extract("alphabet_option", "Q?", chat, TASK_OPTIONS) == "J"
    whole = thought + "So the answer is J."
    assert rules.extract("alphabet_option", "Q?", whole, TASK_OPTIONS) == "J"
