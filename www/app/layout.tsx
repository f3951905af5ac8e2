import type { Metadata } from "next";
import Link from "next/link";
import "./globals.css";

export const metadata: Metadata = {
  title: "engram — memory panel",
  description: "Review, correct and teach what your coding agents remember.",
};

const pages = [
  { href: "/", label: "Health" },
  { href: "/memories", label: "Memories" },
  { href: "/sessions", label: "Sessions" },
  { href: "/map", label: "Module map" },
  { href: "/teach", label: "Teach" },
];

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body>
        <a className="skip" href="#main">
          Skip to content
        </a>
        <header className="top">
          <span className="brand">engram</span>
          <nav aria-label="Panel pages">
            <ul>
              {pages.map((page) => (
                <li key={page.href}>
                  <Link href={page.href}>{page.label}</Link>
                </li>
              ))}
            </ul>
          </nav>
        </header>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </body>
    </html>
  );
}
