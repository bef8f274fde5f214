import { Html, html, raw } from './template';

// Prettier formats `html` templates as HTML; the statements that test exact markup opt out.

describe('the html template', () => {
  it('escapes interpolated text in element content', () => {
    const name = `<script>alert('x')</script> & co`;
    expect(html`<p>${name}</p>`.toString()).toBe('<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co</p>');
  });

  it('escapes interpolated text in double- and single-quoted attributes', () => {
    const value = `a"b' onmouseover="x`;
    // prettier-ignore
    expect(html`<input value="${value}">`.toString()).toBe('<input value="a&quot;b&#39; onmouseover=&quot;x">');
    // prettier-ignore
    expect(html`<a title='${value}'>`.toString()).toBe(`<a title='a&quot;b&#39; onmouseover=&quot;x'>`);
    expect(html`<a href="${'/x?a=1&b=2'}"></a>`.toString()).toBe('<a href="/x?a=1&amp;b=2"></a>');
  });

  it('keeps nested fragments as they are, escaping only what they interpolate', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner} and ${html`<em>${'&'}</em>`}</p>`.toString()).toBe(
      '<p><b>&lt;i&gt;</b> and <em>&amp;</em></p>',
    );
  });

  it('renders an array as its items one after the other, each by the same rules', () => {
    const items = ['<a>', 'b'].map((item) => html`<li>${item}</li>`);
    // prettier-ignore
    expect(html`<ul>${items}</ul>`.toString()).toBe('<ul><li>&lt;a&gt;</li><li>b</li></ul>');
    // prettier-ignore
    expect(html`${['<', html`<br>`, ['&', null]]}`.toString()).toBe('&lt;<br>&amp;');
    // prettier-ignore
    expect(html`<ul>${[]}</ul>`.toString()).toBe('<ul></ul>');
  });

  it('renders null, undefined and false as nothing; numbers and true as text', () => {
    const missing: string | undefined = undefined;
    expect(html`[${null}][${missing}][${false}]`.toString()).toBe('[][][]');
    expect(html`[${0}][${1299}][${true}]`.toString()).toBe('[0][1299][true]');
    expect(html`${false && html`<p>hidden</p>`}`.toString()).toBe('');
  });

  it('passes raw text through unescaped', () => {
    // prettier-ignore
    expect(html`<style>${raw('a > b { color: "red" }')}</style>`.toString()).toBe('<style>a > b { color: "red" }</style>');
    expect(html`${raw('<br>')}`.toString()).toBe('<br>');
    expect(raw('<br>')).toBeInstanceOf(Html);
    expect(raw('<br>').value).toBe('<br>');
  });

  it('is a string where one is asked for', () => {
    const fragment = html`<p>${'x'}</p>`;
    expect(`${fragment}`).toBe('<p>x</p>');
    expect(String(fragment)).toBe('<p>x</p>');
    expect(html`plain`.value).toBe('plain');
  });
});
