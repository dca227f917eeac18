# ruff: noqa: E501  (the notes' text is data: one recipe line each)
"""Write the generated folders of the personal-library evaluation (desktop_memory_bench/data/personal/).

    python scripts/make_personal_notes.py

The small folders (home, projects, garden) are written by hand; this script writes the bigger ones from fixed
facts and sentence pools with a fixed seed, so the files are the same every run: kitchen (recipes), work (meeting
notes) and journal (a year of daily notes). Each file that a question points at holds one distinctive fact; the
filler sentences never use those facts' words.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "desktop_memory_bench" / "data" / "personal"

RECIPES = [
    ("Chicken tikka masala", "chicken thighs, yoghurt, garam masala, tomato passata, double cream, onion, garlic, ginger",
     "Marinate the chicken in yoghurt and spices for at least four hours. Grill until charred at the edges. "
     "Fry the onion slowly, add garlic, ginger and the spices, then the passata, simmer 20 minutes, stir in cream.",
     "Kashmiri chilli powder gives the colour without too much heat."),
    ("Banana bread", "three overripe bananas, 250 g plain flour, 100 g butter, 150 g light brown sugar, two eggs, bicarbonate of soda",
     "Mash the bananas, beat in melted butter, sugar and eggs, fold in the flour. Bake in a lined loaf tin at 170 °C "
     "for 55 to 60 minutes until a skewer comes out clean.",
     "Add a handful of walnuts or dark chocolate chips. Freezes well in slices."),
    ("Mushroom risotto", "arborio rice, chestnut mushrooms, dried porcini, shallots, white wine, parmesan, vegetable stock",
     "Soak the porcini in hot water and use the liquid in the stock. Toast the rice with the shallots, add the wine, "
     "then the stock one ladle at a time, stirring, about 18 minutes. Beat in butter and parmesan off the heat.",
     "Rest it two minutes with the lid on before serving."),
    ("Lamb tagine", "lamb shoulder, preserved lemon, green olives, ras el hanout, chickpeas, dried apricots, coriander",
     "Brown the lamb in batches, soften onions with the ras el hanout, add lamb, stock and apricots, and cook "
     "covered at 150 °C for two and a half hours. Add olives, chickpeas and chopped preserved lemon for the last 30 minutes.",
     "Serve with couscous and a spoon of harissa."),
    ("Pancakes", "100 g plain flour, two eggs, 300 ml milk, pinch of salt, butter for the pan",
     "Whisk everything to a smooth batter and let it rest 30 minutes. Thin layer in a hot buttered pan, about a "
     "minute each side.", "Lemon and sugar on Shrove Tuesday, maple syrup and bacon at the weekend."),
    ("Thai green curry", "green curry paste, coconut milk, chicken breast, Thai aubergines, fish sauce, palm sugar, Thai basil, lime leaves",
     "Fry the paste in the thick part of the coconut milk until the oil splits, add the chicken, then the rest of the "
     "coconut milk and the aubergines. Season with fish sauce and palm sugar, finish with basil.",
     "Mae Ploy paste from the Asian supermarket is the best shop-bought one."),
    ("Shortbread", "225 g butter, 110 g caster sugar, 225 g plain flour, 110 g rice flour",
     "Cream butter and sugar, work in the flours, press into a tin, prick with a fork. Bake at 150 °C for about 40 "
     "minutes until pale gold. Mark into fingers while warm.", "Granny's recipe; the rice flour makes it short."),
    ("Minestrone", "cannellini beans, ditalini pasta, carrots, celery, courgette, tinned tomatoes, parmesan rind, cavolo nero",
     "Sweat the diced vegetables in olive oil, add tomatoes, stock and the parmesan rind, simmer 30 minutes. Add "
     "beans and pasta for the last ten minutes, cavolo nero at the end.", "Even better the next day."),
    ("Beef chilli", "beef mince, kidney beans, chipotle paste, cumin, smoked paprika, dark chocolate, red peppers",
     "Brown the mince hard, add onions and peppers, spices, tomatoes and a square of dark chocolate, simmer an hour.",
     "Serve with rice, soured cream and pickled jalapeños."),
    ("Lemon drizzle cake", "225 g self-raising flour, 225 g butter, 225 g caster sugar, four eggs, two lemons, granulated sugar",
     "All-in-one sponge with the zest of both lemons, bake 45 minutes at 180 °C. While hot, pour over the juice "
     "mixed with granulated sugar so it sets crunchy.", "Poke holes with a skewer first."),
    ("Pad thai", "rice noodles, tamarind paste, fish sauce, prawns, tofu, beansprouts, peanuts, spring onions, eggs",
     "Soak the noodles, stir-fry tofu and prawns, push aside and scramble the eggs, add noodles and the tamarind "
     "sauce, toss with beansprouts. Top with crushed peanuts and lime.", "Everything ready before the wok heats."),
    ("Porridge", "rolled oats, milk, salt, honey or golden syrup",
     "One part oats to two and a half parts milk, a pinch of salt, stir over a low heat five minutes.",
     "Overnight oats in summer: same oats with yoghurt and grated apple."),
    ("Fish pie", "smoked haddock, salmon, king prawns, milk, butter, flour, leeks, mashed potato, cheddar",
     "Poach the fish in milk, make a white sauce with that milk, fold in fish, prawns and softened leeks. Top with "
     "mash and cheese, bake 30 minutes at 200 °C.", "Freezes well before baking."),
    ("Guacamole", "ripe avocados, lime, red onion, coriander, green chilli, salt",
     "Mash avocados roughly with lime juice and salt, stir in finely chopped onion, chilli and coriander.",
     "Press cling film onto the surface or it browns."),
    ("Yorkshire puddings", "three eggs, equal volume of plain flour and milk, beef dripping",
     "Heat dripping in a muffin tin at 230 °C until smoking, pour in the rested batter and do not open the oven "
     "for 20 minutes.", "The batter must rest at least an hour."),
    ("Gnocchi", "floury potatoes, 00 flour, egg yolk, nutmeg, sage butter",
     "Bake the potatoes, rice them while hot, mix in flour and yolk lightly. Roll ropes, cut, boil until they float. "
     "Toss in brown butter with sage.", "Maris Piper or King Edward; waxy potatoes make them gluey."),
    ("Apple crumble", "Bramley apples, demerara sugar, cinnamon, plain flour, cold butter, oats",
     "Stew the apples lightly with sugar and cinnamon, rub butter into flour and oats for the topping, bake 35 "
     "minutes at 190 °C.", "Custard, not cream."),
    ("Falafel", "dried chickpeas soaked overnight, parsley, coriander, garlic, cumin, baking powder, sesame seeds",
     "Blitz the soaked raw chickpeas with herbs and spices, rest an hour, shape and deep fry at 175 °C.",
     "Tinned chickpeas fall apart: they must be dried and soaked."),
    ("Paella", "bomba rice, saffron, chorizo, chicken thighs, prawns, mussels, smoked paprika, green beans",
     "Brown chicken and chorizo in the paella pan, add sofrito, rice and saffron stock and do not stir. Add seafood "
     "for the last ten minutes and let the bottom catch for the socarrat.", "Use the big pan on the barbecue."),
    ("Carrot soup", "carrots, onion, ginger, vegetable stock, coconut milk, coriander",
     "Soften onion and ginger, add chopped carrots and stock, simmer 25 minutes, blend with a little coconut milk.",
     "A spoon of miso deepens it."),
    ("Scones", "450 g self-raising flour, 100 g butter, 50 g sugar, 250 ml milk, one egg, sultanas",
     "Rub butter into flour, add sugar and sultanas, then milk and egg, pat to 3 cm, cut without twisting and bake "
     "12 minutes at 220 °C.", "Jam first, then clotted cream (Cornish way)."),
    ("Bolognese", "beef and pork mince, pancetta, soffritto, whole milk, red wine, tomato purée, tagliatelle",
     "Cook the soffritto and pancetta slowly, brown the mince, add milk and let it absorb, then wine and purée. "
     "Simmer three hours on the lowest heat.", "Serve with tagliatelle, never spaghetti, says Marco."),
    ("Kimchi", "napa cabbage, coarse sea salt, gochugaru, garlic, ginger, fish sauce, spring onions, daikon radish",
     "Salt the quartered cabbage for two hours, rinse, rub in the chilli paste, pack into a jar and ferment at room "
     "temperature for two days before the fridge.", "Burp the jar daily or it overflows."),
    ("Granola", "jumbo oats, maple syrup, coconut oil, almonds, pumpkin seeds, dried cranberries",
     "Toss oats and nuts in warm syrup and oil, bake at 150 °C for 30 minutes, stirring twice, add fruit once cool.",
     "Keeps three weeks in the big Kilner jar."),
    ("Hummus", "tinned chickpeas, tahini, lemon, garlic, ice water, cumin",
     "Blend chickpeas with tahini, lemon and garlic, then add ice water until very smooth and fluffy.",
     "Peeling the chickpeas is worth it for guests."),
    ("Brownies", "200 g dark chocolate, 175 g butter, 325 g caster sugar, three eggs, 130 g plain flour, cocoa",
     "Melt chocolate and butter, whisk eggs and sugar until thick, combine and fold in flour and cocoa. Bake 25 "
     "minutes at 180 °C: the middle should still wobble.", "Cut once completely cold."),
]

TEAM = ["Priya", "Tom", "Aisha", "Ben", "Lukas", "Mei", "Oliver", "Sara", "Dev", "Hannah"]
MEETINGS = [
    ("Postgres upgrade", "Agreed to upgrade the orders database from Postgres 13 to 16 over the weekend of the 14th; "
     "Lukas owns the runbook and the rollback plan using logical replication."),
    ("Hiring frontend engineer", "Shortlisted three candidates for the frontend role; the take-home exercise is the "
     "accessible date picker. Aisha and Ben run the pairing interviews."),
    ("Q3 roadmap", "Q3 priorities: the self-serve billing portal first, then SSO for enterprise customers; the "
     "mobile offline mode moves to Q4."),
    ("Incident review: checkout outage", "The 47-minute checkout outage was caused by an expired TLS certificate on "
     "the payments gateway. Action: automate renewal with cert-manager and add an expiry alert 21 days ahead."),
    ("Office move", "The team moves to the third floor of Harbour House on 2 September. Desks are unassigned; lockers "
     "are allocated by Sara, and the bike storage is in the basement."),
    ("Vendor contract: Datadog", "Datadog renewal quote is 18 % higher. Dev will trial Grafana Cloud for four weeks "
     "and compare before we sign; the contract ends 30 November."),
    ("Accessibility audit", "External audit found 23 WCAG issues, mostly colour contrast and missing form labels. "
     "Target: fix every level A issue before the public sector tender."),
    ("Budget planning 2026", "Headcount budget approved for two backend engineers and one designer; the training "
     "budget stays at £1,500 per person."),
    ("API deprecation", "The v1 REST endpoints will be switched off on 31 March. Customers get three reminder emails; "
     "Mei writes the migration guide to v2."),
    ("Team offsite", "Offsite in the Peak District, 16-17 October, at Losehill House. Agenda: architecture vision, "
     "a hike up Mam Tor and a retro of the year."),
    ("On-call rota", "New on-call rota: one week each, handover on Mondays at 10:00, and a paid allowance of £250 per "
     "week. PagerDuty escalation after 15 minutes."),
    ("Data retention policy", "Customer logs are kept 90 days, invoices seven years. Hannah checks the GDPR deletion "
     "requests are handled within 30 days."),
    ("Kubernetes cost", "Cluster spend rose 30 % after the autoscaler change. Oliver will move batch jobs to spot "
     "instances and right-size the staging node pool."),
    ("Design system", "Adopting the new design tokens in Figma; buttons and inputs first. Storybook becomes the "
     "single source of truth for components."),
    ("Performance reviews", "Mid-year reviews are due by 15 July; use the new growth framework with four levels, "
     "self-assessment first, then the manager's notes."),
    ("Security training", "Phishing simulation click rate was 12 %. Everyone repeats the security awareness course; "
     "hardware keys (YubiKey) for all admins by the end of the month."),
    ("Customer feedback: search", "Customers say search is slow on large workspaces. Tom proposes Elasticsearch "
     "with an index per tenant; spike for two weeks."),
    ("Release process", "Releases move from Thursday to Tuesday mornings, with feature flags in LaunchDarkly so "
     "unfinished work can ship dark."),
    ("Intern project", "The summer intern, Jonah, will build the internal status page with Next.js; Priya mentors."),
    ("Mobile app crash", "The Android app crashes on launch for Samsung devices running Android 14 because of the "
     "splash screen library; hotfix 4.2.1 goes out today."),
]
FILLER = [
    "Quick round of updates from everyone.", "Nothing blocking this week.", "Sprint board reviewed, two tickets "
    "carried over.", "Reminder to fill in the timesheets by Friday.", "Demo went well, stakeholders were happy.",
    "Notes taken by {who}.", "Next meeting same time next week.", "Follow-up questions in the team channel.",
    "{who} was out, {who2} covered.", "We ran five minutes over.", "Coffee machine on the second floor is fixed.",
]

JOURNAL_EVENTS = [
    "The plumber (Gary, from Drip Fix) came about the leaking stopcock under the sink and replaced the washer, £75.",
    "Took Miso to the vet for her booster vaccinations; she weighs 4.6 kg and needs a worming tablet in three months.",
    "Sent off the passport renewal form with two photos; the countersignature was done by Mrs Okafor next door.",
    "Parents' evening at school: Ellie is doing well in maths, needs to read more at home; her teacher is Mr Kaur.",
    "Ran the Cardiff half marathon in 1:52:40, a personal best by three minutes. Knee sore after mile ten.",
    "The council collected the old sofa (bulky waste collection, booked online, £35).",
    "Car battery was flat this morning, the AA man said it is five years old and replaced it for £140.",
    "Planted the garlic cloves in the raised bed, variety Solent Wight, 15 cm apart.",
    "Wedding anniversary: dinner at The Clove Club, the tasting menu; eleven years married.",
    "Started learning Spanish on Duolingo, 15 minutes a day, 30-day streak target.",
    "Broke my phone screen; the repair shop on Queen Street quoted £129 and did it in an hour.",
    "Book club chose 'The Remains of the Day' by Kazuo Ishiguro for next month.",
    "Electricity meter reading 48213 submitted to Octopus; switched to the Agile tariff.",
    "Neighbours' oak tree branch fell on the fence during storm Darragh; insurance claim started, reference 77312.",
    "Donated blood at the community centre, my 20th donation, got the bronze badge.",
    "Kids had chickenpox; calamine lotion and oatmeal baths, off school for a week.",
    "Window cleaner now comes every four weeks on a Wednesday, £18, pay him by bank transfer.",
    "Boiler engineer's report: the expansion vessel needs repressurising next service.",
    "Bought the new lawnmower (Mountfield cordless), the old one is going on Freecycle.",
    "Mum's 70th birthday party planned for 12 July at the cricket club; caterer is Lily's Kitchen.",
]
DAY_POOL = [
    "Rain most of the day, stayed in and read.", "Long walk along the river after lunch.", "Busy day at work, lots of "
    "meetings.", "Cooked a big pot of soup for the week.", "Quiet evening, watched a film.", "Early night, tired.",
    "Sunny and cold, frost on the car.", "Worked from home, good focus in the morning.", "Went to the gym before work.",
    "Called Mum, she is well.", "Tidied the spare room.", "Friends came over for dinner.", "Did the weekly shop.",
    "Slept badly, too warm.", "Finished the jigsaw at last.", "Grey and windy.", "Took the kids to the park.",
    "Caught up on email.", "Laundry and ironing.", "Lovely evening light, sat in the garden.",
]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.strip() + "\n", encoding="utf-8")


def _slug(title: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-").replace("--", "-")


def kitchen() -> None:
    for title, ingredients, method, note in RECIPES:
        _write(ROOT / "kitchen" / f"{_slug(title)}.md",
               f"# {title}\n\n## Ingredients\n{ingredients}.\n\n## Method\n{method}\n\n## Notes\n{note}")


def work(rng: random.Random) -> None:
    day = dt.date(2025, 1, 6)
    topics = list(MEETINGS)
    generic = 40
    slots = ["topic"] * len(topics) + ["weekly"] * generic
    rng.shuffle(slots)
    for kind in slots:
        day += dt.timedelta(days=rng.choice([2, 3, 4, 7]))
        who = rng.sample(TEAM, 4)
        lines = [f"Attendees: {', '.join(who)}"]
        if kind == "topic":
            title, decision = topics.pop()
            name = f"{day.isoformat()}-{_slug(title)}.md"
            lines += [f"\n## {title}", decision]
        else:
            title = "Weekly team sync"
            name = f"{day.isoformat()}-weekly-sync.md"
        lines += ["\n## Other"] + [rng.choice(FILLER).format(who=rng.choice(who), who2=rng.choice(who))
                                     for _ in range(3)]
        _write(ROOT / "work" / name, f"# {title} - {day:%d %B %Y}\n\n" + "\n".join(lines))


def journal(rng: random.Random) -> None:
    day = dt.date(2025, 1, 1)
    events = list(JOURNAL_EVENTS)
    event_days = set(rng.sample(range(240), len(events)))
    for i in range(240):
        d = day + dt.timedelta(days=i)
        body = rng.sample(DAY_POOL, 2)
        if i in event_days:
            body.insert(1, events.pop())
        _write(ROOT / "journal" / f"{d.isoformat()}.txt", f"{d:%A %d %B %Y}\n\n" + " ".join(body))


def main() -> None:
    rng = random.Random(30)
    kitchen()
    work(rng)
    journal(rng)


if __name__ == "__main__":
    main()
