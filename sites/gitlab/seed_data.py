"""Vocabulary of the forge's seed: projects, groups, labels, issue and merge request phrasing, and
the file templates the repositories are grown from."""

from __future__ import annotations

# (path, name, kind, description, visibility)
BYTEBLAZE_PROJECTS = (
    (
        "a11y-syntax-highlighting",
        "a11y-syntax-highlighting",
        "theme",
        "Accessible syntax highlighting themes for Prism and highlight.js with WCAG AA color contrast.",
        "public",
    ),
    ("dotfiles", "dotfiles", "dotfiles", "My dotfiles: zsh, vim, git and tmux configuration.", "public"),
    (
        "empathy-prompts",
        "empathy-prompts",
        "js",
        "Ideas to help consider Inclusive Design principles when making things for others to use.",
        "public",
    ),
    (
        "millennials-to-snake-people",
        "millennials-to-snake-people",
        "extension",
        "Chrome extension that replaces occurrences of 'Millennials' with 'Snake People'.",
        "public",
    ),
    (
        "remove-board-movement-events-from-the-github-issue-timeline",
        "remove-board-movement-events-from-the-github-issue-timeline",
        "extension",
        "Userscript that hides project board movement events from the GitHub issue timeline.",
        "public",
    ),
    ("solarized-prism-theme", "solarized-prism-theme", "theme", "A Solarized dark theme for PrismJS.", "public"),
    ("byteblaze.gitlab.io", "byteblaze.gitlab.io", "site", "My personal website and blog.", "public"),
    ("cloud-to-butt", "cloud-to-butt", "extension", "Replaces the text 'the cloud' with 'my butt'.", "public"),
    (
        "accessible-html-content-patterns",
        "accessible-html-content-patterns",
        "site",
        "The full HTML5 element list with accessible markup patterns.",
        "public",
    ),
    ("timeit", "timeit", "python", "A tiny command line tool to time shell commands.", "private"),
)

# group path, group name, description, projects (path, name, kind, description)
GROUPS = (
    (
        "a11yproject",
        "The A11Y Project",
        "A community-driven effort to make digital accessibility easier.",
        (
            (
                "a11yproject.com",
                "a11yproject.com",
                "site",
                "The A11Y Project is a community-driven effort to make digital accessibility easier.",
            ),
            ("checklist", "checklist", "docs", "The A11Y Project accessibility checklist as data."),
        ),
    ),
    (
        "primer",
        "Primer",
        "Primer is a design system for building consistent interfaces.",
        (
            ("design", "design", "docs", "Primer design guidelines, principles and foundations."),
            ("css", "css", "theme", "The CSS implementation of the Primer design system."),
            ("octicons", "octicons", "js", "A scalable set of icons handcrafted for the web."),
        ),
    ),
    (
        "kube-tools",
        "Kube Tools",
        "Small tools for people who run Kubernetes clusters.",
        (
            ("kubectl-aliases", "kubectl-aliases", "dotfiles", "Programmatically generated handy kubectl aliases."),
            ("helm-lint-action", "helm-lint-action", "python", "Lint Helm charts in CI pipelines."),
        ),
    ),
    (
        "datasci",
        "Data Science Guild",
        "Notebooks, utilities and teaching material.",
        (
            ("pandas-cookbook", "pandas-cookbook", "python", "Recipes for using Python's pandas library."),
            (
                "ml-course",
                "ml-course",
                "docs",
                "Lecture notes and exercises for an introductory machine learning course.",
            ),
        ),
    ),
)

# Projects of other users: (path, kind, description)
USER_PROJECTS = (
    ("awesome-accessibility", "docs", "A curated list of accessibility resources."),
    ("ffmpeg-wrapper", "python", "Python bindings for FFmpeg with complex filtering support."),
    ("vim-colors", "theme", "A collection of color schemes for Vim."),
    ("react-tooltip-lite", "js", "A lightweight and accessible tooltip component for React."),
    ("jekyll-starter", "site", "A minimal Jekyll starter kit for personal blogs."),
    ("tab-saver", "extension", "Save and restore browser tab sessions."),
    ("csv-to-json", "js", "Convert CSV files to JSON from the command line."),
    ("pomodoro-cli", "python", "A Pomodoro timer for your terminal."),
    ("recipes", "docs", "Family recipes, in Markdown."),
    ("portfolio", "site", "My portfolio website."),
    ("dotfiles", "dotfiles", "Configuration for bash, vim and git."),
    ("weather-bot", "python", "A chat bot that posts the daily weather forecast."),
    ("color-contrast-checker", "js", "Check the color contrast of text against WCAG 2.1."),
    ("markdown-linter", "js", "Lint Markdown files for style and consistency."),
    ("gitlab-ci-templates", "docs", "Reusable GitLab CI/CD pipeline templates."),
    ("snake-game", "js", "The classic snake game in vanilla JavaScript."),
    ("budget-tracker", "python", "Track monthly expenses from bank CSV exports."),
    ("hackathon-2022", "site", "Our team's project from the 2022 hackathon."),
)

LABELS = (  # title, color, description
    ("bug", "#d9534f", "Something isn't working"),
    ("enhancement", "#5cb85c", "New feature or request"),
    ("documentation", "#428bca", "Improvements or additions to documentation"),
    ("question", "#cc338b", "Further information is requested"),
    ("help wanted", "#009966", "Extra attention is needed"),
    ("good first issue", "#7057ff", "Good for newcomers"),
    ("duplicate", "#808080", "This issue or pull request already exists"),
    ("wontfix", "#ffffff", "This will not be worked on"),
    ("accessibility", "#ed9121", "Affects people using assistive technology"),
    ("design", "#8fbc8f", "Visual design and layout"),
    ("feature", "#6699cc", "A new feature"),
    ("priority: high", "#ff0000", "Needs attention soon"),
)

COMPONENTS = (
    "README",
    "navigation",
    "header",
    "footer",
    "search",
    "color palette",
    "dark mode",
    "build script",
    "install script",
    "test suite",
    "homepage",
    "blog post layout",
    "code blocks",
    "syntax theme",
    "contributing guide",
    "checklist page",
    "keyboard navigation",
    "focus styles",
    "link styles",
    "mobile layout",
    "CI pipeline",
    "package.json",
    "options page",
    "icon set",
    "release notes",
)
PROBLEMS = (
    "has insufficient color contrast",
    "is broken on Safari",
    "does not work with a screen reader",
    "breaks on small screens",
    "throws an error on startup",
    "is missing alt text",
    "has a typo",
    "is out of date",
    "is slow to load",
    "fails in Firefox",
    "loses focus after closing a dialog",
    "renders twice",
    "has a broken link",
    "uses deprecated APIs",
    "does not respect reduced motion",
)
FEATURES = (
    "Add support for {thing}",
    "Add {thing} to the {component}",
    "Document how to use {thing}",
    "Consider switching to {thing}",
    "Improve {component} for {thing}",
    "Support {thing} in the {component}",
    "Allow configuring {thing}",
    "Add an example for {thing}",
)
THINGS = (
    "TypeScript",
    "dark mode",
    "high contrast mode",
    "VoiceOver",
    "NVDA",
    "keyboard shortcuts",
    "RTL languages",
    "Firefox",
    "npm 8",
    "Node 18",
    "prefers-reduced-motion",
    "GitLab Pages",
    "Markdown tables",
    "Rust",
    "Python 3.11",
    "a print stylesheet",
    "skip links",
    "emoji",
    "i18n",
    "unit tests",
    "ESLint",
    "Prettier",
)
ISSUE_EXTRA_TITLES = (
    "Broken link in the footer",
    "Update the contributors list",
    "Typo on the about page",
    "Focus outline not visible on buttons",
    "Headings skip a level on the resources page",
    "Tab order is confusing in the navigation menu",
    "Images are missing alternative text",
    "Links are not distinguishable without color",
    "Improve the README installation steps",
    "Add a code of conduct",
    "Migrate CI to GitLab CI/CD",
    "Remove unused dependencies",
    "Error when running npm install",
    "Make the site work without JavaScript",
    "Add a changelog",
    "Add license information to package.json",
    "Support for Windows line endings",
)
ISSUE_BODIES = (
    "### Summary\n\n{title}.\n\n### Steps to reproduce\n\n1. Open the {component}\n2. Use {thing}\n3. Observe the problem\n\n"
    "### Expected behavior\n\nIt should work the same as everywhere else.\n",
    "I noticed that the {component} {problem}. This makes it hard for some people to use the project.\n\n"
    "Would a fix for this be welcome? I'm happy to open a merge request.",
    "It would be great to {lower_title}. Several people asked about it.\n\n- It keeps the project consistent\n"
    "- It helps people using {thing}\n",
    "{title}.\n\nSee the screenshot and the console output below.\n\n```\nTypeError: cannot read properties of undefined\n```\n",
)
COMMENTS = (
    "Thanks for reporting this! I can reproduce it.",
    "I can confirm this on {thing} as well.",
    "Good catch. Would you like to open a merge request?",
    "I'm working on a fix for this.",
    "This should be fixed in the latest version, can you try again?",
    "+1, this affects me too.",
    "Could you share a minimal example that shows the problem?",
    "I think this is a duplicate of an older issue.",
    "Looks good to me :thumbsup:",
    "Let's discuss this in the next triage meeting.",
    "I've pushed a change that should address this.",
    "Nice, thanks for the quick turnaround!",
    "What browser and operating system are you using?",
    "Closing since there has been no activity for a while.",
    "We should also update the documentation once this lands.",
    "LGTM, merging once the pipeline passes.",
)
MR_TITLES = (
    "Fix {component} {short_problem}",
    "Add {thing} support",
    "Update {component}",
    "Improve {component}",
    "Refactor {component}",
    "Document {thing}",
    "Bump dependencies",
    "Add tests for {component}",
    "Draft: Rework {component}",
    "Remove deprecated {component} code",
)
SHORT_PROBLEMS = ("contrast", "typo", "layout on mobile", "focus handling", "broken links", "crash", "alt text")
COMMIT_MESSAGES = (
    "Update {file}",
    "Fix typo in {file}",
    "Add {thing} support",
    "Refactor {file}",
    "Improve {component}",
    "Fix {component} on small screens",
    "Bump version to {version}",
    "Add tests",
    "Clean up {file}",
    "Update dependencies",
    "Document {thing}",
    "Fix lint warnings",
    "Tweak colors",
    "Remove unused code",
    "Merge remote-tracking branch 'origin/main'",
    "Add comments",
    "Rename variables in {file}",
)
BRANCH_PREFIXES = ("fix", "feature", "update", "docs", "refactor")

FIRST_NAMES_OF_FAKE_EMAIL_DOMAINS = ("gmail.com", "outlook.com", "example.org", "protonmail.com", "fastmail.com")

LICENSE_MIT = """MIT License

Copyright (c) {year} {owner}

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""

README = """# {name}

{description}

## Installation

{install}

## Usage

{usage}

## Contributing

Contributions are welcome! Please open an issue first to discuss what you would like to change,
and make sure to update tests as appropriate.

## License

[MIT](LICENSE)
"""

INSTALL = {
    "js": "```\nnpm install {name}\n```",
    "theme": "Copy `themes/{name}.css` into your project and include it after the Prism stylesheet.",
    "dotfiles": "```\ngit clone https://gitlab.com/{owner}/{name}.git ~/.dotfiles\ncd ~/.dotfiles && ./install.sh\n```",
    "extension": "Load the `src` folder as an unpacked extension from `chrome://extensions`.",
    "site": "```\nbundle install\nbundle exec jekyll serve\n```",
    "python": "```\npip install {name}\n```",
    "docs": "No installation needed: read the documents in the `docs` folder.",
}
USAGE = {
    "js": "```js\nconst lib = require('{name}');\nlib.run({{ verbose: true }});\n```",
    "theme": "Add the `language-*` class to your code blocks and the theme takes care of the rest.",
    "dotfiles": "Edit the files, then run `./install.sh` again to update the symlinks.",
    "extension": "Browse the web as usual. The extension works on every page.",
    "site": "Open http://localhost:4000 in your browser.",
    "python": "```\n{module} --help\n```",
    "docs": "Start with `docs/index.md`.",
}

# kind -> {path: template}; {name} {module} {owner} {year} {description} are filled in.
FILES = {
    "js": {
        "package.json": '{{\n  "name": "{name}",\n  "version": "1.0.0",\n  "description": "{description}",\n'
        '  "main": "src/index.js",\n  "scripts": {{\n    "test": "jest",\n    "lint": "eslint src"\n  }},\n'
        '  "license": "MIT"\n}}\n',
        "src/index.js": "'use strict';\n\nconst {{ format }} = require('./format');\n\nfunction run(options = {{}}) {{\n"
        "  const result = format(options);\n  return result;\n}}\n\nmodule.exports = {{ run }};\n",
        "src/format.js": "'use strict';\n\nfunction format(options) {{\n  return JSON.stringify(options, null, 2);\n}}\n\n"
        "module.exports = {{ format }};\n",
        "test/index.test.js": "const {{ run }} = require('../src');\n\ntest('run returns a string', () => {{\n"
        "  expect(typeof run()).toBe('string');\n}});\n",
        ".gitignore": "node_modules/\ncoverage/\n.DS_Store\n",
        ".eslintrc.json": '{{\n  "extends": "eslint:recommended",\n  "env": {{ "node": true, "es2021": true }}\n}}\n',
    },
    "theme": {
        "package.json": '{{\n  "name": "{name}",\n  "version": "2.1.0",\n  "description": "{description}",\n'
        '  "files": ["themes"],\n  "license": "MIT"\n}}\n',
        "themes/{name}.css": '/* {name} */\ncode[class*="language-"],\npre[class*="language-"] {{\n  color: #f8f8f2;\n'
        "  background: #2b2b2b;\n  font-family: Consolas, Monaco, monospace;\n}}\n\n.token.comment {{\n"
        "  color: #d4d0ab;\n}}\n\n.token.keyword {{\n  color: #dcc6e0;\n}}\n\n.token.string {{\n"
        "  color: #abe338;\n}}\n",
        "demo/index.html": '<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <title>{name} demo</title>\n'
        '  <link rel="stylesheet" href="../themes/{name}.css">\n</head>\n<body>\n'
        '  <pre><code class="language-js">const answer = 42;</code></pre>\n</body>\n</html>\n',
        ".gitignore": "node_modules/\n.DS_Store\n",
    },
    "dotfiles": {
        ".zshrc": "export EDITOR=vim\nexport PATH=\"$HOME/bin:$PATH\"\n\nalias ll='ls -lah'\nalias gs='git status'\n"
        "alias gd='git diff'\n\nsetopt HIST_IGNORE_DUPS\n",
        ".vimrc": "set nocompatible\nsyntax on\nset number\nset relativenumber\nset expandtab\nset shiftwidth=2\n"
        "set tabstop=2\nset incsearch\n",
        ".gitconfig": "[user]\n  name = {owner}\n[alias]\n  co = checkout\n  st = status\n  lg = log --oneline --graph\n"
        "[pull]\n  rebase = true\n",
        ".tmux.conf": "set -g mouse on\nset -g history-limit 10000\nbind r source-file ~/.tmux.conf\n",
        "install.sh": "#!/usr/bin/env bash\nset -euo pipefail\n\nfor f in .zshrc .vimrc .gitconfig .tmux.conf; do\n"
        '  ln -sf "$PWD/$f" "$HOME/$f"\ndone\necho "Done."\n',
    },
    "extension": {
        "manifest.json": '{{\n  "manifest_version": 3,\n  "name": "{name}",\n  "version": "1.4.0",\n'
        '  "description": "{description}",\n  "content_scripts": [{{\n    "matches": ["<all_urls>"],\n'
        '    "js": ["src/content_script.js"]\n  }}]\n}}\n',
        "src/content_script.js": "(function () {{\n  'use strict';\n\n  function walk(node) {{\n"
        "    node.childNodes.forEach(walk);\n    if (node.nodeType === 3) {{\n"
        "      node.nodeValue = replace(node.nodeValue);\n    }}\n  }}\n\n"
        "  function replace(text) {{\n    return text;\n  }}\n\n  walk(document.body);\n}})();\n",
        "images/icon-48.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48"><circle cx="24" cy="24" r="20"/></svg>\n',
        ".gitignore": "*.zip\n.DS_Store\n",
    },
    "site": {
        "_config.yml": "title: {name}\ndescription: {description}\nmarkdown: kramdown\npermalink: /:year/:title/\n",
        "index.html": '---\nlayout: default\n---\n<main id="main">\n  <h1>{name}</h1>\n  <p>{description}</p>\n</main>\n',
        "_layouts/default.html": '<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n'
        '  <title>{{{{ page.title }}}}</title>\n  <link rel="stylesheet" href="/css/main.css">\n</head>\n'
        '<body>\n  <a class="skip-link" href="#main">Skip to content</a>\n  {{{{ content }}}}\n</body>\n</html>\n',
        "css/main.css": "body {{\n  font-family: system-ui, sans-serif;\n  line-height: 1.5;\n  color: #222;\n}}\n\n"
        ".skip-link {{\n  position: absolute;\n  left: -999px;\n}}\n\n.skip-link:focus {{\n  left: 1rem;\n}}\n",
        "_posts/{year}-03-14-hello-world.md": "---\ntitle: Hello world\n---\n\nWelcome to {name}! This is the first post.\n",
        "Gemfile": 'source "https://rubygems.org"\n\ngem "jekyll", "~> 4.2"\n',
        ".gitlab-ci.yml": "image: ruby:3.1\n\npages:\n  script:\n    - bundle install\n    - bundle exec jekyll build -d public\n"
        "  artifacts:\n    paths:\n      - public\n  only:\n    - main\n",
    },
    "python": {
        "setup.py": 'from setuptools import setup, find_packages\n\nsetup(\n    name="{name}",\n    version="0.3.0",\n'
        '    description="{description}",\n    packages=find_packages(),\n    python_requires=">=3.8",\n)\n',
        "{module}/__init__.py": '"""{description}"""\n\n__version__ = "0.3.0"\n',
        "{module}/core.py": 'import argparse\n\n\ndef main(argv=None):\n    parser = argparse.ArgumentParser(prog="{name}")\n'
        '    parser.add_argument("--verbose", action="store_true")\n    args = parser.parse_args(argv)\n'
        "    return 0\n",
        "tests/test_core.py": "from {module}.core import main\n\n\ndef test_main_runs():\n    assert main([]) == 0\n",
        "requirements.txt": "requests>=2.28\n",
        ".gitignore": "__pycache__/\n*.egg-info/\n.venv/\n",
    },
    "docs": {
        "docs/index.md": "# {name}\n\n{description}\n\n- [Getting started](getting-started.md)\n- [FAQ](faq.md)\n",
        "docs/getting-started.md": "# Getting started\n\nRead the overview, then pick a topic that interests you.\n",
        "docs/faq.md": "# Frequently asked questions\n\n## Can I contribute?\n\nYes! See CONTRIBUTING.md.\n",
        "CONTRIBUTING.md": "# Contributing\n\n1. Fork the project\n2. Create a branch\n3. Open a merge request\n",
    },
}

# Lines appended by later commits, per file extension.
EXTRA_LINES = {
    ".js": (
        "// TODO: handle edge cases",
        "const DEBUG = false;",
        "// keep this in sync with the docs",
        "module.exports.version = '1.0.1';",
    ),
    ".css": (
        ".token.number {{ color: #f5ab35; }}",
        ".token.function {{ color: #ffd700; }}",
        "a:focus {{ outline: 2px solid currentColor; }}",
        ".token.operator {{ color: #00e0e0; }}",
    ),
    ".md": (
        "See also the changelog.",
        "Thanks to everyone who contributed!",
        "- Works with {thing}",
        "> Note: this project is maintained in my spare time.",
    ),
    ".py": ("# TODO: add type hints", "DEFAULT_TIMEOUT = 30", '__all__ = ["main"]'),
    ".html": ("<!-- analytics removed -->", "<footer>Made with care.</footer>"),
    ".json": (),
    ".yml": ("# updated settings",),
    ".sh": ("# re-run safe",),
    "": ("# local overrides", "alias gl='git pull'"),
}
