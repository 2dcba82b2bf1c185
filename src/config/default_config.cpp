// The embedded default configuration: the reference servers' five categories, their prompts, and
// keyword rules made of generic domain vocabulary (not the evaluation sentences).
#include "mcpclass/config/config.hpp"

namespace mcpclass::config {

namespace {

constexpr std::string_view kDefaultConfig = R"yaml(
categories:
  - name: math
    description: Mathematical and computational queries
    system_prompt: |-
      You are a mathematics expert. When answering math questions:
      - Show step-by-step solutions with clear explanations
      - Use proper mathematical notation and terminology
      - Verify calculations and provide intermediate steps
      - Explain the underlying concepts and principles
      - Offer alternative approaches when applicable
  - name: science
    description: Scientific concepts and queries
    system_prompt: |-
      You are a science expert. When answering science questions:
      - Provide evidence-based answers grounded in scientific research
      - Explain relevant scientific concepts and principles
      - Use appropriate scientific terminology
      - Cite the scientific method and experimental evidence when relevant
      - Distinguish between established facts and current theories
  - name: technology
    description: Technology and computing topics
    system_prompt: |-
      You are a technology expert. When answering tech questions:
      - Include practical examples and code snippets when relevant
      - Follow best practices and industry standards
      - Explain both high-level concepts and implementation details
      - Consider security, performance, and maintainability
      - Recommend appropriate tools and technologies for the use case
  - name: history
    description: Historical events and topics
    system_prompt: |-
      You are a history expert. When answering historical questions:
      - Provide accurate dates, names, and historical context
      - Cite time periods and geographical locations
      - Explain the causes, events, and consequences
      - Consider multiple perspectives and historical interpretations
      - Connect historical events to their broader significance
  - name: general
    description: General questions and topics
    system_prompt: |-
      You are a knowledgeable assistant. When answering general questions:
      - Provide balanced, well-rounded responses
      - Draw from multiple domains of knowledge when relevant
      - Be clear, concise, and accurate
      - Adapt your explanation to the complexity of the question
      - Acknowledge limitations and uncertainties when appropriate

classifier:
  kind: rules
  fallback: general
  fallback_score: 1.0
  temperature: 0.5
  rules:
    math:
      keyword_weight: 1.0
      pattern_weight: 1.5
      keywords: [math, maths, mathematics, mathematical, algebra*, arithmetic, calculus,
                 geometry, geometric, trigonometr*, derivative*, differentiat*, integral*,
                 integrat*, antiderivative*, equation*, inequalit*, theorem*, lemma, proof*,
                 formula*, polynomial*, quadratic, linear algebra, matrix, matrices, vector*,
                 eigenvalue*, eigenvector*, determinant*, logarithm*, log, ln, exponent*,
                 factorial*, fraction*, decimal*, percentage*, ratio*, prime number*,
                 complex number*, real number*, rational number*, irrational, integer*,
                 probabilit*, statistic*, standard deviation, variance, median,
                 average, multipl*, divided by, division of, subtract*, calculat*,
                 solve, solving, square root*, squared, cubed, radius, diameter, circumference,
                 perimeter, angle*, triangle*, circle*, rectangle*, polygon*,
                 hypotenuse, pythagorean, sine, cosine, tangent, limits,
                 infinite series, sequence*, permutation*, combinatoric*, set theory,
                 numerator, denominator, slope, parabola*, asymptote* , sum, divisible, remainder, modulo, gcd, lcm, coefficient*, converge*, diverge*, expected value, random variable*, distribution*, subset*, vector space*, linear transformation*, digit*, geometric series, arithmetic sequence]
      patterns:
        - '\d\s*[-+*/^×÷=]\s*\(?\s*\d'
        - '\b\d*\s*[a-z]\s*\^\s*\d'
        - '\b\d+\s*[a-z]\s*[-+=]\s*\d'
        - '\b(sin|cos|tan|log|ln|exp|sqrt)\s*\('
        - '\b\d+(\s*,?\s+\d+){3,}\b'
    science:
      keyword_weight: 1.0
      keywords: [science, scientific, scientist*, physics, physical law*, chemistry, chemical*,
                 biology, biological, photosynth*, cell, cells, cellular, dna, rna, gene, genes,
                 genetic*, genome*, protein*, enzyme*, molecule*, molecular, atom, atoms, atomic,
                 electron*, proton*, neutron*, nucleus, nuclei, isotope*, quantum, gravity,
                 gravitation*, newton*, relativity, motion, velocity, acceleration, momentum,
                 energy, thermodynamic*, entropy, evolution*, natural selection, species,
                 organism*, ecosystem*, ecolog*, climate, geolog*, tectonic*, earthquake*,
                 volcano*, astronom*, astrophysic*, planet*, galax*, universe, cosmolog*,
                 big bang, black hole*, acid*, alkal*, periodic table, element*, compound*,
                 reaction*, chemical bond*, immune, immunity, immunolog*, vaccin*, virus*,
                 bacteri*, microb*, brain*, neuron*, neuroscien*, nervous system, hormone*,
                 metabolism, mitosis, meiosis, water cycle, evaporation, condensation, oxygen,
                 carbon, hydrogen, nitrogen, magnet*, electricity, electromagnet*, wavelength,
                 radiation, experiment*, hypothesis, fossil*, dinosaur*, anatomy, physiolog*,
                 botan*, zoolog*, respiration, osmosis, catalyst* , force*, mass, charge*, voltage, circuit*, resistor*, capacitor*, frequency, frequencies, wave, waves, light, photon*, laser*, particle*, kinetic, potential energy, heat, temperature*, pressure, gas, gases, liquid*, fluid*, orbit*, moon, moons, sun, solar, star, stars, asteroid*, comet*, telescope*, lens, lenses, mole, moles, molar, ion, ions, ionic, ph, concentration, oxidation, equilibrium, kelvin, celsius, joule*, watt*, density, friction, inertia, torque, pendulum*, magnetic field*, electric field*, thermal, nuclear, fission, fusion, radioactive, half-life, spectrum, spectra, organic, inorganic, mutation*, chromosome*, allele*, heredit*, tissue*, organ, organs, mammal*, reptile*, insect*, cytoplasm, mitochondri*, ribosome*, membrane*, embryo*, engineering, engine, engines, turbine*, combustion, fuel*]
    technology:
      keyword_weight: 1.0
      keywords: [technology, technologies, technical, tech, computer*, computing, software,
                 hardware, programming, programmer*, code, coding, developer*,
                 algorithm*, data structure*, database*, sql, nosql, api, apis, rest, restful,
                 http, https, internet, web, website*, web server*, browser*, server*, network*,
                 cloud, machine learning, deep learning, neural network*, artificial intelligence,
                 ai, llm*, python, java, javascript, typescript, c++, golang, rust, html, css,
                 git, github, version control, docker, container*, kubernetes, microservice*,
                 devops, encrypt*, decrypt*, cryptograph*, cybersecurity, malware, firewall*,
                 blockchain, cryptocurrenc*, bitcoin, compiler*, interpreter*, operating system*,
                 linux, unix, app, apps, smartphone*, robot*, automation, continuous integration,
                 continuous deployment, continuous delivery, ci/cd, deployment*, agile, scrum,
                 object-oriented, responsive design, responsive web, frontend, front-end,
                 backend, back-end, framework*, debug*, cpu, gpu, processor*, data science,
                 cache, caching, latency, bandwidth, protocol*, tcp, wifi, bluetooth, digital,
                 virtual machine*, user interface, ux, open source, source code, repository,
                 kernel, byte*, binary, bit, bits, router*, semiconductor*, chip*, laptop* , array*, pointer*, recursion, recursive, stack, queue*, hash table*, hashing, binary tree*, sorting, big-o, boolean, logic gate*, instruction set*, register*, ram, disk*, file system*, thread*, multithread*, turing machine*, automata, automaton, regular expression*, packet*, ip address*, dns, ethernet, floating point, two's complement, machine code, assembly language, virtual memory]
    history:
      keyword_weight: 1.0
      pattern_weight: 1.0
      keywords: [history, historical, historian*, ancient, medieval, middle ages, century,
                 centuries, empire*, emperor*, dynast*, kingdom*, pharaoh*, war, wars, warfare,
                 battle*, revolution*, civil war, world war, cold war, colonial*, coloni*,
                 civilization*, civilisation*, renaissance, reformation, bronze age, iron age,
                 stone age, viking*, roman, romans, rome, ancient greece, mesopotamia*, aztec*,
                 inca*, maya, mayan*, crusade*, feudal*, monarch*, treaty, treaties, civil rights,
                 slavery, great depression, explorer*, conquest*, conquer*, conquistador*,
                 ottoman*, byzantine, mongol*, samurai, shogun*, independence, prehistor*,
                 archaeolog*, dictator*, holocaust, genocide, trade route*,
                 reign*, ruler*, abolition*, suffrage, era , king, kings, queen, queens, colonies, slave*, tribe*, parliament*, republic*, constitution*, nationalism, imperialis*, communis*, socialis*, fascis*, nazi*, soviet*, protestant*, catholic*, pope*, peasant*, neolithic, paleolithic, hunter-gatherer*, president*, presidency]
      patterns:
        - '^\W*(who|what|where|how) (was|were)\b'
        - '^\W*(when|why|how) did\b'
        - '^\W*what (happened|caused|led to)\b'
        - '\bwho (discovered|invented|founded|ruled|conquered|built)\b'
        - '\b(1[0-9]|20)th century\b'
        - '\b\d+\s*(bc|bce|ad)\b'
    general:
      keyword_weight: 1.0
      pattern_weight: 1.0
      keywords: [tips, advice, recipe*, cook*, cooking, coffee, tea, food, diet*, nutrition*,
                 healthy, eating, exercise*, fitness, workout*, sleep*, stress*, anxiety,
                 meditat*, mindful*, relationship*, friend*, friendship*, dating, family,
                 parenting, career*, resume*, job, jobs, interview*, salary, money, budget*,
                 invest*, saving*, retirement, travel*, vacation*, hobby, hobbies, garden*,
                 houseplant*, book*, movie*, film*, music, habit*, motivat*, productiv*,
                 happiness, happy, wellness,
                 well-being, emotional*, self-care, lifestyle,
                 sustainab*, recycl*,
                 pets, dog*, cat, cats, weather, holiday*, gift*, etiquette]
      patterns:
        - '^\W*how (do|can|should|could) i\b'
        - '\b(my|myself)\b'

routing:
  reasoning: rules
  default_model: openai/gpt-oss-20b

server:
  name: mcpclass
  version: )yaml" MCPCLASS_VERSION_STRING R"yaml(
  max_text_length: 10000
  http:
    host: 127.0.0.1
    port: 8090
)yaml";

}  // namespace

std::string_view default_config_yaml() {
  return kDefaultConfig;
}

Config default_config() {
  // Parsed once: every document without categories starts from it, and parsing compiles the
  // rules. A constant, initialized thread-safely, so it is not shared mutable state.
  static const Config parsed = parse_config(kDefaultConfig, Format::yaml);
  return parsed;
}

}  // namespace mcpclass::config
