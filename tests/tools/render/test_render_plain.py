"""Plain text from the renderer's Markdown: the same words, none of the markup."""

from __future__ import annotations

from webreach.tools.render import render_page
from webreach.tools.render.markdown.plain import markdown_to_text

PAGE = """<html><head><title>T</title></head><body><article>
<h2>Big *news*</h2>
<p>Some <b>bold</b>, <i>slanted</i> and <a href="/x">linked</a> words with <code>a_b</code>.</p>
<p>Literal C:\\temp, *stars*, [brackets], 2 &lt; 3 and snake_case_name.</p>
<blockquote><p>Quoted words.</p></blockquote>
<ul><li>one</li><li>two</li></ul>
<pre><code class="language-py">x = `y` * 2  # **kept**</code></pre>
<hr>
<table><tr><th>Name</th><th>A|B</th></tr><tr><td>x</td><td>1</td></tr></table>
<p>- not a list</p><p>1. not a number</p>
</article></body></html>"""


def test_the_markup_goes_and_the_words_stay() -> None:
    text = markdown_to_text(render_page(PAGE, base_url="https://e.example/").markdown)
    assert text.split("\n\n") == [
        "Big *news*",
        "Some bold, slanted and linked words with a_b.",
        "Literal C:\\temp, *stars*, [brackets], 2 < 3 and snake_case_name.",
        "Quoted words.",
        "- one\n- two",
        "x = `y` * 2  # **kept**",
        "Name\tA|B\nx\t1",
        "- not a list",
        "1. not a number",
    ]


def test_text_that_is_not_markdown_is_left_alone() -> None:
    assert markdown_to_text("plain words, no markup\nsecond line") == (
        "plain words, no markup\nsecond line"
    )
